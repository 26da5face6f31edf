/**
 * One site's part of a bulk update: its items applied one after the other, each recorded in the
 * update history. Plain plugins and themes on the site held once (site-held-items.ts), safe items as
 * safe updates (site-safe-items.ts), translations and core through the wordpress-updates service;
 * after plain updates, one probe of the front page. The outcomes and their recording: site-outcomes.ts.
 */
import type { WriteBatch } from '../db/write-batch.js';
import type { Inventory } from '../inventory/index.js';
import { updateProblems } from '../inventory/index.js';
import type { PlainRestorePoints, SafeUpdatePolicy } from '../safe-updates/index.js';
import type { Events } from '../shared/event-bus.js';
import { isNothingToUpdate, type UpdateAttempt, type UpdateRecorder } from '../update-history/index.js';
import {
  updateHeldItems,
  type InventoryAfterUpdates,
  type ItemUpdates,
  type OperateOnSite,
} from './site-held-items.js';
import { createSiteRun, withRestorePoint, type ItemOutcome, type PlannedItem, type SiteRun } from './site-outcomes.js';
import { applySafely, type SafeUpdate } from './site-safe-items.js';

export { ItemOutcomeSchema, PlannedItemSchema, type ItemOutcome, type PlannedItem } from './site-outcomes.js';
export type { InventoryAfterUpdates, OperateOnSite } from './site-held-items.js';
export type { SafeUpdate } from './site-safe-items.js';

/** The single-site services a bulk update applies through (the same ones the single-site routes call). */
export interface UpdateServices {
  plugins: ItemUpdates;
  themes: ItemUpdates;
  wordpressUpdates: {
    applyCore(siteId: string, options?: { version?: string }): Promise<{ previousVersion: string; version: string }>;
    applyTranslations(siteId: string): Promise<{ updated: unknown[] }>;
  };
}

/**
 * Applies one site's items one after the other, recording each attempt. Plugins and themes are
 * updated while the site is held once (`operate`: its queue, then one inventory refresh for them
 * all), each through its service's one update of an item on a held site; translations and core go
 * through the single-site service. Never throws: each item ends succeeded, failed or skipped.
 */
export function createSiteUpdater({
  services,
  operate,
  inventoryAfter,
  recorder,
  events,
  safeUpdate,
  inventories,
  restorePoints,
}: {
  services: UpdateServices;
  /** The stored inventory, for the plugin files an update names (the planned items name slugs). */
  inventories: { read(siteId: string): Promise<Inventory | undefined> };
  operate: OperateOnSite;
  inventoryAfter: InventoryAfterUpdates;
  recorder: UpdateRecorder;
  events: Events;
  /** For bulk updates asked to be safe (and policies, whose runs are safe by default). */
  safeUpdate: SafeUpdate;
  /**
   * The restore point each plain plugin, theme or core update takes first (none: updated without),
   * and the front page probe after a site's plain updates.
   */
  restorePoints?: Pick<PlainRestorePoints, 'before' | 'beforeOn'> &
    Partial<Pick<PlainRestorePoints, 'versionOnDisk' | 'probeFrontPage' | 'discard'>>;
}) {
  return async function applySiteUpdates({
    siteId,
    items,
    trigger,
    jobId,
    safe = false,
    checks,
    onItem,
    batch,
  }: {
    siteId: string;
    items: PlannedItem[];
    trigger: UpdateAttempt['trigger'];
    jobId: string;
    safe?: boolean;
    /** The safe updates' checks (a single safe update's `policy`); none: their defaults. */
    checks?: Partial<SafeUpdatePolicy>;
    onItem: (outcomes: ItemOutcome[]) => void;
    /** The site update's writes (its history, the inventory patch, the caller's own): committed before each request and by the caller at the end. */
    batch: WriteBatch;
  }): Promise<ItemOutcome[]> {
    const probing = !safe && restorePoints?.probeFrontPage !== undefined;
    const run = createSiteRun({
      siteId,
      items,
      trigger,
      jobId,
      record: recorder.batched(batch),
      events,
      onItem,
      probing,
    });
    const { outcomes } = run;

    // A safe update holds the site for each of its own steps, so safe items are not held here.
    const held = safe ? [] : outcomes.filter((item) => item.type === 'plugin' || item.type === 'theme');
    await updateHeldItems(run, held, { services, operate, inventoryAfter, inventories, restorePoints, batch });

    // Translations and core, and every safe item.
    for (const outcome of outcomes) {
      if (outcome.state !== 'pending') continue;
      if (outcome.type === 'translations') await run.settleFrom(outcome, () => updateTranslations(run, outcome));
      else if (safe) await applySafely(run, outcome, { safeUpdate, checks });
      else if (outcome.type === 'core') await run.settleFrom(outcome, () => updateCore(run, outcome));
    }
    if (probing) {
      await probeAfterPlainUpdates(run, batch);
      onItem(outcomes);
    }
    return outcomes;
  };

  /** Core through the single-site service, after the restore point a safe core update takes (wp-admin, wp-includes, the root PHP files). */
  async function updateCore(run: SiteRun, outcome: ItemOutcome): Promise<string | null> {
    const { siteId } = run;
    const taking = restorePoints?.before(siteId, 'core', 'wordpress');
    const taken = await withRestorePoint(run.attempt(outcome), taking);
    const point = (await taking)?.restorePoint;
    const updated = await run.record.track(
      taken,
      (row) => {
        run.rowOf(outcome)(row);
        return services.wordpressUpdates
          .applyCore(siteId, outcome.toVersion ? { version: outcome.toVersion } : {})
          .catch(async (error: unknown) => {
            // Refused before anything changed (not that version on offer): the copy is not needed.
            if (point && isNothingToUpdate(error)) await restorePoints?.discard?.(siteId, point);
            throw error;
          });
      },
      (result) => result.version,
    );
    return updated.version;
  }

  /** Every language pack on offer, through the single-site service (no restore point). */
  async function updateTranslations(run: SiteRun, outcome: ItemOutcome): Promise<null> {
    await run.record.track(
      run.attempt(outcome),
      () => services.wordpressUpdates.applyTranslations(run.siteId),
      () => null,
    );
    return null;
  }

  /**
   * A plain update checks nothing, and one can land and break the site on the next request (a
   * plugin whose new code fatals): once per site, after its plain items, one GET of the front page.
   * When it answers 5xx or a fatal error, every plain plugin, theme or core update of the site that
   * succeeded here is recorded applied with the site unhealthy (`update-applied-site-unhealthy`),
   * as one whose read-back failed, so its restore point is offered to roll back.
   */
  async function probeAfterPlainUpdates({ siteId, outcomes, rows, record }: SiteRun, batch: WriteBatch): Promise<void> {
    const applied = outcomes.filter(
      (outcome) => outcome.type !== 'translations' && outcome.state === 'succeeded' && outcome.reason === null,
    );
    if (applied.length === 0 || !restorePoints?.probeFrontPage) return;
    await batch.commit();
    const probe = await restorePoints.probeFrontPage(siteId);
    if (!probe || probe.healthy) return;
    const names = applied.map((outcome) => outcome.slug ?? outcome.type);
    for (const outcome of applied) {
      const item = outcome.slug ?? outcome.type;
      const message = `${item} ${outcome.toVersion ?? '?'} is on the site now${outcome.fromVersion ? ` (it was ${outcome.fromVersion})` : ''}, but the site failed after ${applied.length > 1 ? `the plain updates of ${names.join(', ')}` : 'the update'}: ${probe.url} answered HTTP ${probe.status} (${probe.problem})`;
      const rowId = rows.get(outcome);
      if (rowId) record.appliedButUnhealthy(rowId, message);
      Object.assign(outcome, { reason: updateProblems.appliedSiteUnhealthy.name, message });
    }
  }
}

export type SiteUpdater = ReturnType<typeof createSiteUpdater>;
