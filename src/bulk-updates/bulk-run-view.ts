import { z } from 'zod';
import { jobView } from '../jobs/jobs.schemas.js';
import type { JobRow } from '../jobs/jobs.table.js';
import { parseStored } from '../shared/stored-json.js';
import type { BulkUpdateRun } from './bulk-updates.schemas.js';
import { ItemOutcomeSchema, PlannedItemSchema, type ItemOutcome, type PlannedItem } from './site-updater.js';
import { triggerKinds } from '../update-history/index.js';
import { SafeUpdatePolicySchema } from '../safe-updates/index.js';

/** What a bulk job's row holds in `params`. */
const BulkParamsSchema = z.object({
  trigger: z.object({ kind: z.enum(triggerKinds), id: z.string().nullable() }),
  dryRun: z.boolean(),
  notAfter: z.string().nullable(),
  sites: z.number(),
  /** Each plugin, theme and core item as a safe update (checks, restore point, rollback); absent in older rows: false. */
  safe: z.boolean().optional(),
  /** The checks of those safe updates, as asked (defaults filled in); absent: each safe update's defaults. */
  checks: SafeUpdatePolicySchema.nullable().optional(),
});
export type BulkParams = z.infer<typeof BulkParamsSchema>;
/** What a site's child job holds in `params`; its `progress` holds `{ items: ItemOutcome[] }` once it ran. */
const ChildParamsSchema = z.object({
  bulkId: z.string(),
  url: z.string(),
  host: z.string(),
  items: z.array(PlannedItemSchema),
});
export type ChildParams = z.infer<typeof ChildParamsSchema>;
const ChildProgressSchema = z.object({ items: z.array(ItemOutcomeSchema).optional() });

/** What a preview's (a dry run's) row holds in `progress`: its plan, and once applied, the bulk job it was applied as. */
const PreviewProgressSchema = z.object({
  plan: z.array(z.object({ siteId: z.string(), url: z.string(), items: z.array(PlannedItemSchema) })),
  appliedAs: z.string().optional(),
});
export type PreviewProgress = z.infer<typeof PreviewProgressSchema>;
/** The counts a (not dry run) bulk job's `progress` holds once it started; `{}` before. */
const BulkCountsSchema = z.object({
  done: z.number().optional(),
  succeeded: z.number().optional(),
  failed: z.number().optional(),
});

/** A bulk update's and its sites' rows, read with the schemas they were written by (never cast). */
export const stored = {
  bulkParams: (job: Pick<JobRow, 'id' | 'params'>): BulkParams =>
    parseStored(BulkParamsSchema, job.params, `the params of bulk update ${job.id}`),
  childParams: (child: Pick<JobRow, 'id' | 'params'>): ChildParams =>
    parseStored(ChildParamsSchema, child.params, `the params of site update ${child.id}`),
  /** A site update's items as they ended or stand; undefined before it ran. */
  childItems: (child: Pick<JobRow, 'progress'> & { id?: string }): ItemOutcome[] | undefined =>
    parseStored(ChildProgressSchema, child.progress, `the progress of site update ${child.id ?? '(ending)'}`).items,
  previewProgress: (job: Pick<JobRow, 'id' | 'progress'>): PreviewProgress =>
    parseStored(PreviewProgressSchema, job.progress, `the plan of preview ${job.id}`),
};

/** A child left unstarted for one of these reasons is shown `skipped`, not `cancelled`. */
const SKIP_REASONS = new Set(['window-closed', 'site-not-connected', 'interrupted']);

const iso = (date: Date | null) => date?.toISOString() ?? null;
const pending = (items: PlannedItem[]): ItemOutcome[] =>
  items.map((item) => ({ ...item, state: 'pending', reason: null, message: null }));

type SiteState = BulkUpdateRun['sites'][number]['state'];

/** A site cancelled before its turn: its items were never started, so none reads as still to come. */
const notLeftPending = (state: SiteState, items: ItemOutcome[]): ItemOutcome[] =>
  state !== 'cancelled'
    ? items
    : items.map((item) =>
        item.state === 'pending'
          ? {
              ...item,
              state: 'skipped',
              reason: 'cancelled',
              message: 'the site was cancelled before this item was updated',
            }
          : item,
      );

function siteState(child: Pick<JobRow, 'state' | 'reason' | 'progress'> & { id?: string }): SiteState {
  if (child.state === 'cancelled') return child.reason && SKIP_REASONS.has(child.reason) ? 'skipped' : 'cancelled';
  if (child.state === 'succeeded') {
    const items = stored.childItems(child) ?? [];
    // Nothing was left to update on the site (every item skipped): the site is skipped too.
    if (items.length > 0 && items.every((item) => item.state === 'skipped')) return 'skipped';
  }
  return child.state;
}

function of(job: JobRow, children: JobRow[]): BulkUpdateRun {
  const params = stored.bulkParams(job);
  const counts = { total: 0, done: 0, succeeded: 0, failed: 0, skipped: 0, cancelled: 0 };
  if (params.dryRun) {
    const { plan, appliedAs } = stored.previewProgress(job);
    return {
      job: jobView(job),
      dryRun: true,
      safe: params.safe ?? false,
      checks: params.checks ?? null,
      trigger: params.trigger,
      notAfter: params.notAfter,
      appliedAs: appliedAs ?? null,
      progress: { ...counts, total: plan.length },
      sites: plan.map((site) => ({
        siteId: site.siteId,
        url: site.url,
        jobId: null,
        state: 'queued',
        reason: null,
        message: null,
        startedAt: null,
        finishedAt: null,
        items: pending(site.items),
      })),
    };
  }
  const sites = children.map((child) => {
    const childParams = stored.childParams(child);
    const state = siteState(child);
    counts.total++;
    if (state !== 'queued' && state !== 'running') {
      counts.done++;
      counts[state]++;
    }
    return {
      siteId: child.siteId ?? '',
      url: childParams.url,
      jobId: child.id,
      state,
      reason: child.reason,
      message: child.message,
      startedAt: iso(child.startedAt),
      finishedAt: iso(child.finishedAt),
      items: notLeftPending(state, stored.childItems(child) ?? pending(childParams.items)),
    };
  });
  return {
    job: jobView(job),
    dryRun: false,
    safe: params.safe ?? false,
    checks: params.checks ?? null,
    trigger: params.trigger,
    notAfter: params.notAfter,
    appliedAs: null,
    progress: counts,
    sites,
  };
}

/** A run in a list (the dashboard's history): no per-site rows, only the counts its row already holds. */
function summary(job: JobRow) {
  const params = stored.bulkParams(job);
  const progress = parseStored(BulkCountsSchema, job.progress, `the progress of bulk update ${job.id}`);
  return {
    id: job.id,
    state: job.state,
    dryRun: params.dryRun,
    safe: params.safe ?? false,
    trigger: params.trigger,
    sites: params.sites,
    done: progress.done ?? 0,
    succeeded: progress.succeeded ?? 0,
    failed: progress.failed ?? 0,
    createdAt: job.createdAt,
    finishedAt: job.finishedAt,
  };
}

export const runView = { of, siteState, summary };
