/**
 * One site update's items and how each ends: the planned items and their outcomes (what a site's
 * child job keeps in its progress), the order they run in, and the run every item path shares to
 * record its attempt and settle it (its state, its `update.applied` / `update.failed` event, the progress).
 */
import { z } from 'zod';
import type { Events } from '../shared/event-bus.js';
import {
  isNothingToUpdate,
  messageOf,
  reasonOf,
  updateItemTypes,
  type BatchedRecorder,
  type PlainRestorePoint,
  type UpdateAttempt,
  type UpdateHistoryRow,
  type UpdateItemType,
} from '../update-history/index.js';

/** One thing to update on one site, as planned: from the inventory, and the version expected (null: whatever is offered). */
export const PlannedItemSchema = z.object({
  type: z.enum(updateItemTypes),
  slug: z.string().nullable(),
  fromVersion: z.string().nullable(),
  toVersion: z.string().nullable(),
});
export type PlannedItem = z.infer<typeof PlannedItemSchema>;
export const ItemOutcomeSchema = PlannedItemSchema.extend({
  state: z.enum(['pending', 'succeeded', 'failed', 'skipped']),
  reason: z.string().nullable(),
  message: z.string().nullable(),
  /** The safe update it ran as (its report), when it ran as one. */
  safeUpdateId: z.string().nullable().optional(),
});
export type ItemOutcome = z.infer<typeof ItemOutcomeSchema>;

/**
 * Plugins first, then themes, then translations, core last: a core update is the biggest change
 * (new files, a database upgrade) and the one most likely to fail, so everything else is done
 * before it, and plugins and themes are already at versions made for the new core when it lands.
 * Within a type by slug, so runs are repeatable.
 */
const ORDER: Record<UpdateItemType, number> = { plugin: 0, theme: 1, translations: 2, core: 3 };
const inUpdateOrder = <T extends { type: UpdateItemType; slug: string | null }>(items: T[]): T[] =>
  [...items].sort((a, b) => ORDER[a.type] - ORDER[b.type] || (a.slug ?? '').localeCompare(b.slug ?? ''));

/** A plain update's attempt with its restore point, as its history row keeps it. */
export async function withRestorePoint(
  attempt: UpdateAttempt,
  taking: Promise<PlainRestorePoint> | undefined,
): Promise<UpdateAttempt> {
  const taken = await taking;
  return { ...attempt, restorePoint: taken?.restorePoint ? JSON.stringify(taken.restorePoint) : null };
}

/** One site update as its item paths share it. */
export type SiteRun = ReturnType<typeof createSiteRun>;

/**
 * The outcomes of one site's items (pending, in update order) and how each is recorded and ended.
 * `probing`: the front page probe follows the site's plain updates, so the last item's end is told
 * (`onItem`) only after it, which may add its warning.
 */
export function createSiteRun({
  siteId,
  items,
  trigger,
  jobId,
  record,
  events,
  onItem,
  probing,
}: {
  siteId: string;
  items: PlannedItem[];
  trigger: UpdateAttempt['trigger'];
  jobId: string;
  record: BatchedRecorder;
  events: Events;
  onItem: (outcomes: ItemOutcome[]) => void;
  probing: boolean;
}) {
  const outcomes: ItemOutcome[] = inUpdateOrder(items).map((item) => ({
    ...item,
    state: 'pending',
    reason: null,
    message: null,
  }));
  /** Each plain attempt's history row, for the front page probe after them. */
  const rows = new Map<ItemOutcome, string>();

  /** Ends an item: its state and why, its event, the progress. */
  const settle = (outcome: ItemOutcome, changes: Partial<ItemOutcome>) => {
    Object.assign(outcome, changes);
    const fields = {
      bulkId: jobId,
      siteId,
      type: outcome.type,
      slug: outcome.slug,
      fromVersion: outcome.fromVersion,
      toVersion: outcome.toVersion,
    };
    if (outcome.state === 'succeeded') events.emit('update.applied', fields);
    if (outcome.state === 'failed')
      events.emit('update.failed', { ...fields, reason: outcome.reason, message: outcome.message });
    // The last item's end waits for the front page probe after a site's plain updates, which may add its warning.
    if (!probing || outcomes.some((item) => item.state === 'pending')) onItem(outcomes);
  };

  return {
    siteId,
    outcomes,
    rows,
    /** The site update's attempts, recorded through its write batch. */
    record,
    settle,
    /** The attempt an item records (its history row's fields). */
    attempt: (outcome: ItemOutcome): UpdateAttempt => ({ siteId, ...outcome, trigger, jobId }),
    /** Keeps a plain attempt's history row (as it started), for the front page probe. */
    rowOf: (outcome: ItemOutcome) => (row: UpdateHistoryRow) => void rows.set(outcome, row.id),
    /** Ends an item by `work`: succeeded at the version it answers (null: the one planned), else skipped (nothing to update) or failed. */
    async settleFrom(outcome: ItemOutcome, work: () => Promise<string | null>): Promise<void> {
      try {
        settle(outcome, { state: 'succeeded', toVersion: (await work()) ?? outcome.toVersion });
      } catch (error) {
        const state = isNothingToUpdate(error) ? 'skipped' : 'failed';
        settle(outcome, { state, reason: reasonOf(error), message: messageOf(error) });
      }
    },
  };
}
