import { z } from 'zod';
import { unbatched, type WriteBatch } from '../db/write-batch.js';
import type { AppliedUpdates, Inventory } from '../inventory/index.js';
import { appliedButUnhealthy, mayHaveChangedFiles, storedPlugins, updateProblems } from '../inventory/index.js';
import { isAppError, isProblem } from '../shared/errors.js';
import type { PlainRestorePoints, SafeUpdatePolicy } from '../safe-updates/index.js';
import type { Events } from '../shared/event-bus.js';
import { notKeptProblem } from '../update-history/index.js';
import type { AvailableUpdates } from '../wordpress/connector-client.js';
import type { ConnectedSite } from '../wordpress/site-access.js';
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
  type UpdateRecorder,
} from '../update-history/index.js';

/** What updating an item on a held site needs of it (the plugins and themes services' `UpdatablePlugin` / `UpdatableTheme`). */
interface HeldItem {
  slug: string;
  file: string;
  version: string;
  update: { version: string } | null;
}
/** The connector's answer to an update that named the version expected: updated, or refused as the offer changed. */
type ExpectedUpdate =
  | {
      result: 'updated';
      previousVersion: string;
      version: string;
      active: boolean;
      offer?: ItemOffer | null;
      requires?: string[];
    }
  | { result: 'refused'; version: string | null; offer: ItemOffer | null };
interface ItemOffer {
  version: string;
  newVersion: string;
}
interface ItemUpdates {
  /** One update, not recorded (the site updater records it in its write batch). */
  apply(siteId: string, slug: string): Promise<{ version: string }>;
  /** One update on a site already held by `operate`: the connector's update, failure event and problem mapping. */
  updateOn(
    site: ConnectedSite,
    item: HeldItem & { update: { version: string } },
  ): Promise<{ version: string; active: boolean }>;
  /** `updateOn` made only when the site offers `expectedVersion` (null: any), in one request (connector 1.5.0+). */
  updateExpecting(site: ConnectedSite, item: HeldItem, expectedVersion: string | null): Promise<ExpectedUpdate>;
}
/** The stored inventory, for the plugin files an update names (the planned items name slugs). */
type StoredInventories = { read(siteId: string): Inventory | undefined };
/** Holds a site (its queue) for the work, then refreshes its stored inventory once (`refresh`, or in full): SiteAccess.operate. */
export type OperateOnSite = <T>(
  siteId: string,
  work: (site: ConnectedSite) => Promise<T>,
  options: { refresh?: () => Promise<unknown> },
) => Promise<T>;
/** The stored inventory after a held site's updates: patched from what the connector answered, or read in full. */
export interface InventoryAfterUpdates {
  /** Writes the patch now (synchronous, so it commits with the site update's other writes); false: none stored to patch. */
  patch(siteId: string, applied: AppliedUpdates): boolean;
  /** Reads the site in full and stores what it holds. */
  sync(siteId: string): Promise<unknown>;
}

/** The single-site services a bulk update applies through (the same ones the single-site routes call). */
export interface UpdateServices {
  plugins: ItemUpdates;
  themes: ItemUpdates;
  wordpressUpdates: {
    applyCore(siteId: string, options?: { version?: string }): Promise<{ previousVersion: string; version: string }>;
    applyTranslations(siteId: string): Promise<{ updated: unknown[] }>;
  };
}

/** How a safe update of one item ended (the safe-updates feature's report, as far as a bulk update needs it). */
interface SafeOutcome {
  id: string;
  status: string;
  reason: string | null;
  message: string | null;
  toVersion: string | null;
  /** A page changed beyond the threshold: on a kept update, a warning. */
  visualChange?: boolean;
  screenshots?: { url: string; changedRatio: number | null }[];
  policy?: { visual: { threshold: number } };
}
/** A safe update that did not update because the site already failed its checks before: skipped, not the update's fault. */
const SITE_DOWN_BEFORE_UPDATE = 'site-down-before-update';
/** Updates one plugin, theme or core safely: checks, restore point, update, checks, rollback when the site broke. */
export type SafeUpdate = (request: {
  siteId: string;
  type: 'plugin' | 'theme' | 'core';
  slug: string;
  version?: string;
  /** How it checks the site and when it rolls back (the bulk update's `checks`); none: its defaults. */
  policy?: Partial<SafeUpdatePolicy>;
}) => Promise<SafeOutcome>;

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

/** Offers by item: a plugin's slug is its folder (or its file without .php), as the inventory names it; each with its file. */
function offersOf(updates: AvailableUpdates) {
  const plugins = new Map(
    Object.entries(updates.plugins).map(([file, offer]) => {
      const name = file.replace(/\.php$/, '');
      return [name.includes('/') ? name.split('/', 1)[0]! : name, { ...offer, file }] as const;
    }),
  );
  const themes = new Map(Object.entries(updates.themes).map(([file, offer]) => [file, { ...offer, file }] as const));
  return { plugin: plugins, theme: themes };
}

/** Why a planned plugin or theme is not updated when the site's offer is not the one planned (none, or another version). */
function offerChanged(outcome: ItemOutcome, offer: { newVersion: string } | null | undefined): [string, string] {
  return !offer
    ? ['no-update-available', `the site offers no update of ${outcome.type} ${outcome.slug} any more`]
    : ['version-changed', `the site now offers ${outcome.slug} ${offer.newVersion}, not ${outcome.toVersion}`];
}

/** The plugin files of a site's stored inventory, by slug. */
function pluginFiles(siteId: string, stored: Inventory | undefined): Map<string, string> {
  const plugins = stored ? storedPlugins(stored.pluginsJson, siteId) : [];
  return new Map(plugins.map((plugin) => [plugin.slug, plugin.file]));
}

/**
 * Applies one site's items one after the other, recording each attempt. Plugins and themes are
 * updated while the site is held once (`operate`: its queue, then one inventory refresh for them
 * all), straight through the connector's update routes, which keep the same rules as a single-site
 * update (the connector's plugin dependency rules, WordPress's upgraders); translations and core
 * go through the single-site service. Never throws: each item ends succeeded, failed or skipped.
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
  inventories: StoredInventories;
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
  /** A plain update's attempt with its restore point, as its history row keeps it. */
  const withRestorePoint = async (attempt: UpdateAttempt, taking: Promise<PlainRestorePoint> | undefined) => {
    const taken = await taking;
    return { ...attempt, restorePoint: taken?.restorePoint ? JSON.stringify(taken.restorePoint) : null };
  };

  return async function applySiteUpdates({
    siteId,
    items,
    trigger,
    jobId,
    safe = false,
    checks,
    onItem,
    batch = unbatched,
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
    batch?: WriteBatch;
  }): Promise<ItemOutcome[]> {
    const record = recorder.batched(batch);
    const probing = !safe && restorePoints?.probeFrontPage !== undefined;
    const outcomes: ItemOutcome[] = inUpdateOrder(items).map((item) => ({
      ...item,
      state: 'pending',
      reason: null,
      message: null,
    }));

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
    const attempt = (outcome: ItemOutcome): UpdateAttempt => ({ siteId, ...outcome, trigger, jobId });
    /** Each plain attempt's history row, for the front page probe after them. */
    const rows = new Map<ItemOutcome, string>();
    const rowOf = (outcome: ItemOutcome) => (row: UpdateHistoryRow) => void rows.set(outcome, row.id);
    const apply = async (outcome: ItemOutcome, work: () => Promise<string | null>) => {
      try {
        settle(outcome, { state: 'succeeded', toVersion: (await work()) ?? outcome.toVersion });
      } catch (error) {
        const state = isNothingToUpdate(error) ? 'skipped' : 'failed';
        settle(outcome, { state, reason: reasonOf(error), message: messageOf(error) });
      }
    };

    // A safe update holds the site for each of its own steps, so safe items are not held here.
    const held = safe ? [] : outcomes.filter((item) => item.type === 'plugin' || item.type === 'theme');
    if (held.length > 0) {
      // Filled while the site is held; stays null (a full refresh) unless every update attempted was done.
      let applied: AppliedUpdates | null = null;
      await Promise.resolve()
        .then(() =>
          operate(
            siteId,
            async (site) => {
              applied = site.connector.knownToHave('updates/expected-version')
                ? await updateExpecting(site)
                : await updateAfterReadingOffers(site);
            },
            {
              // Still in the site's turn: the patch commits with the history's ends (and the caller's end, once known).
              refresh: async () => {
                const done: AppliedUpdates | null = applied;
                if (done && batch.commit(() => inventoryAfter.patch(siteId, done))) return;
                batch.commit();
                await inventoryAfter.sync(siteId);
              },
            },
          ),
        )
        // The site could not be held (gone, disconnected): the single-site path below answers each item's problem.
        .catch(() => undefined);
    }

    /** One read of what the site offers now, for every plugin and theme item, then an update request per item. */
    async function updateAfterReadingOffers(site: ConnectedSite): Promise<AppliedUpdates | null> {
      const updates = await site.connector.updatesIfAvailable();
      if (!updates) return null; // The single-site path below says why (connector missing, outdated, failing).
      const live = offersOf(updates);
      const done: AppliedUpdates = {
        updates,
        // Not read for this: the environment stays as the last sync stored it (one request less per site).
        info: null,
        plugins: new Map(),
        themes: new Map(),
      };
      let attemptedAndNotDone = false;
      for (const outcome of held) {
        const type = outcome.type as 'plugin' | 'theme';
        const offer = live[type].get(outcome.slug ?? '');
        if (!offer || (outcome.toVersion !== null && offer.newVersion !== outcome.toVersion)) {
          const [reason, message] = offerChanged(outcome, offer);
          const fromVersion = offer?.version ?? outcome.fromVersion;
          record.skipped({ ...attempt(outcome), fromVersion }, reason, message);
          settle(outcome, { state: 'skipped', reason, message, fromVersion });
          continue;
        }
        outcome.fromVersion = offer.version;
        outcome.toVersion = offer.newVersion;
        const item = {
          slug: outcome.slug!,
          file: offer.file,
          version: offer.version,
          update: { version: offer.newVersion },
        };
        const version = (result: { version: string }) => result.version;
        const started = await withRestorePoint(
          attempt(outcome),
          restorePoints?.beforeOn(site, type, item.slug, item.file),
        );
        await apply(outcome, () =>
          record
            .track(
              started,
              (row) => {
                rowOf(outcome)(row);
                return services[`${type}s`].updateOn(site, item);
              },
              version,
            )
            .then((answer) => {
              if (type === 'plugin') done.plugins.set(offer.file, answer);
              else done.themes.set(offer.file, answer);
              return answer.version;
            }),
        );
        if (outcome.state !== 'succeeded') attemptedAndNotDone = true;
      }
      // An update that failed (or found nothing to do) may leave the site other than the offers said
      // (WordPress's upgrader removes the old copy first): then the site is read in full.
      return attemptedAndNotDone ? null : done;
    }

    /**
     * One request per item (connector `updates/expected-version`): the site updates only when it
     * offers the version planned, else refuses and says what it has and offers now, which ends the
     * item as the offers read does (`no-update-available`, `version-changed`), history included.
     */
    async function updateExpecting(site: ConnectedSite): Promise<AppliedUpdates | null> {
      // Read once: for the plugin files, and as what the inventory patch after the updates starts from.
      const stored = inventories.read(siteId);
      const files = held.some((outcome) => outcome.type === 'plugin') ? pluginFiles(siteId, stored) : null;
      const done: AppliedUpdates = { updates: null, info: null, plugins: new Map(), themes: new Map(), stored };
      let attemptedAndNotDone = false;
      for (const outcome of held) {
        const type = outcome.type as 'plugin' | 'theme';
        const file = type === 'plugin' ? files?.get(outcome.slug ?? '') : (outcome.slug ?? undefined);
        if (!file) continue; // Not in the stored inventory: the single-site path below reads the site.
        const item = {
          slug: outcome.slug!,
          file,
          version: outcome.fromVersion ?? '',
          update: outcome.toVersion === null ? null : { version: outcome.toVersion },
        };
        const answered = type === 'plugin' ? done.plugins : done.themes;
        // A refusal ends the item as the offers read does: why, and the version the site has (its offer's).
        const skippedAs = (offer: ItemOffer | null) => {
          const [reason, message] = offerChanged(outcome, offer);
          return { reason, message, fromVersion: offer?.version ?? outcome.fromVersion };
        };
        try {
          const started = await withRestorePoint(
            attempt(outcome),
            restorePoints?.beforeOn(site, type, item.slug, file),
          );
          const answer = await record.trackEnding(
            started,
            (row) => {
              rowOf(outcome)(row);
              return services[`${type}s`]
                .updateExpecting(site, item, outcome.toVersion)
                .catch((error: unknown) => appliedOnDisk(siteId, type, item, started.restorePoint, error));
            },
            (answer) => {
              if (answer.result === 'updated')
                return { result: 'succeeded', fromVersion: answer.previousVersion, toVersion: answer.version };
              const { reason, message, fromVersion } = skippedAs(answer.offer);
              return { result: 'skipped', reason, error: message, fromVersion };
            },
          );
          if (answer.result === 'refused') {
            settle(outcome, { state: 'skipped', ...skippedAs(answer.offer) });
            // The stored offer follows what the site now offers (its state stays as stored).
            if (answer.version !== null) answered.set(file, { version: answer.version, offer: answer.offer });
            continue;
          }
          answered.set(file, answer);
          settle(outcome, { state: 'succeeded', fromVersion: answer.previousVersion, toVersion: answer.version });
        } catch (error) {
          if (isProblem(error, updateProblems.appliedSiteUnhealthy)) {
            // The new version is on disk all the same: applied (the inventory shows it), with the site failing after it.
            const version = String(error.extensions.version);
            answered.set(file, { version, offer: null });
            settle(outcome, {
              state: 'succeeded',
              toVersion: version,
              reason: reasonOf(error),
              message: messageOf(error),
            });
            continue;
          }
          const state = isNothingToUpdate(error) ? 'skipped' : 'failed';
          settle(outcome, { state, reason: reasonOf(error), message: messageOf(error) });
          attemptedAndNotDone = true;
        }
      }
      // As after an offers read: an update that failed may leave the site other than it was; then it is read in full.
      return attemptedAndNotDone ? null : done;
    }

    // Translations and core, every safe item, and any plugin or theme the held pass could not reach.
    for (const outcome of outcomes) {
      if (outcome.state !== 'pending') continue;
      if (safe && outcome.type !== 'translations') await applySafely(outcome);
      else await apply(outcome, () => applyOne(record, siteId, attempt(outcome), rowOf(outcome)));
    }
    if (probing) {
      await probeAfterPlainUpdates();
      onItem(outcomes);
    }
    return outcomes;

    /**
     * A plain update checks nothing, and one can land and break the site on the next request (a
     * plugin whose new code fatals): once per site, after its plain items, one GET of the front page.
     * When it answers 5xx or a fatal error, every plain plugin, theme or core update of the site that
     * succeeded here is recorded applied with the site unhealthy (`update-applied-site-unhealthy`),
     * as one whose read-back failed, so its restore point is offered to roll back.
     */
    async function probeAfterPlainUpdates(): Promise<void> {
      const applied = outcomes.filter(
        (outcome) => outcome.type !== 'translations' && outcome.state === 'succeeded' && outcome.reason === null,
      );
      if (applied.length === 0 || !restorePoints?.probeFrontPage) return;
      batch.commit();
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

    /**
     * A safe update: kept, the item succeeded (with the warning `visual-change` when a page looks different); the
     * site already down before it (or nothing on offer), skipped; otherwise failed with its decision
     * (`update-rolled-back`, …) or its reason.
     */
    async function applySafely(outcome: ItemOutcome): Promise<void> {
      const type = outcome.type as 'plugin' | 'theme' | 'core';
      const started = attempt(outcome);
      const request = {
        siteId,
        type,
        slug: type === 'core' ? 'wordpress' : outcome.slug!,
        ...(outcome.toVersion ? { version: outcome.toVersion } : {}),
        ...(checks ? { policy: checks } : {}),
      };
      const notUpdated = (report: SafeOutcome) =>
        report.status === 'failed' &&
        (report.reason === SITE_DOWN_BEFORE_UPDATE || report.reason === 'no-update-available');
      try {
        const report = await record.trackEnding(
          started,
          async () => {
            const report = await safeUpdate(request);
            if (report.status === 'kept' || notUpdated(report)) return report;
            const { problem, message } = notKeptProblem(report);
            throw problem.create(message, { safeUpdateId: report.id });
          },
          (report) =>
            report.status === 'kept'
              ? {
                  result: 'succeeded',
                  toVersion: report.toVersion ?? started.toVersion,
                  safeUpdateId: report.id,
                  // Kept, but it looks different: a warning on its succeeded row.
                  ...(report.visualChange ? { reason: 'visual-change', error: lookChanged(report) } : {}),
                }
              : { result: 'skipped', reason: report.reason, error: report.message, safeUpdateId: report.id },
        );
        if (report.status === 'kept')
          settle(outcome, {
            state: 'succeeded',
            toVersion: report.toVersion ?? outcome.toVersion,
            safeUpdateId: report.id,
            ...(report.visualChange ? { reason: 'visual-change', message: lookChanged(report) } : {}),
          });
        else
          settle(outcome, {
            state: 'skipped',
            reason: report.reason,
            message: report.message,
            safeUpdateId: report.id,
          });
      } catch (error) {
        const state = isNothingToUpdate(error) ? 'skipped' : 'failed';
        const safeUpdateId = isAppError(error) ? error.extensions.safeUpdateId : undefined;
        settle(outcome, {
          state,
          reason: reasonOf(error),
          message: messageOf(error),
          ...(typeof safeUpdateId === 'string' ? { safeUpdateId } : {}),
        });
      }
    }
  };

  /**
   * A plain update whose request failed (the site failed, not refused) after taking its restore
   * point: when the standalone path reads a new version on disk, it was applied all the same, and
   * the site is unhealthy (`update-applied-site-unhealthy`, which the history records applied).
   */
  async function appliedOnDisk(
    siteId: string,
    type: 'plugin' | 'theme',
    item: HeldItem,
    restorePoint: string | null | undefined,
    error: unknown,
  ): Promise<never> {
    if (restorePoint && restorePoints?.versionOnDisk && mayHaveChangedFiles(error)) {
      const onDisk = await restorePoints.versionOnDisk(siteId, type, item.file);
      if (onDisk && onDisk !== item.version)
        throw appliedButUnhealthy({ slug: item.slug, fromVersion: item.version || null }, onDisk, error);
    }
    throw error;
  }

  /** A kept safe update's warning: which pages look different, by how much. */
  function lookChanged(report: SafeOutcome): string {
    const threshold = report.policy?.visual.threshold ?? 0;
    const pages = (report.screenshots ?? [])
      .filter((shot) => (shot.changedRatio ?? 0) > threshold)
      .map((shot) => `${shot.url} changed on ${((shot.changedRatio ?? 0) * 100).toFixed(1)} % of its pixels`);
    return `kept, but it looks different (safe update ${report.id}): ${pages.join('; ') || 'a page changed'} (threshold ${(threshold * 100).toFixed(1)} %)`;
  }

  async function applyOne(
    record: BatchedRecorder,
    siteId: string,
    attempt: UpdateAttempt,
    started: (row: UpdateHistoryRow) => void,
  ): Promise<string | null> {
    const version = (result: { version: string }) => result.version;
    switch (attempt.type) {
      case 'plugin':
      case 'theme': {
        const type = attempt.type;
        const taken = await withRestorePoint(attempt, restorePoints?.before(siteId, type, attempt.slug!));
        return record
          .track(
            taken,
            (row) => {
              started(row);
              return services[`${type}s`].apply(siteId, attempt.slug!);
            },
            version,
          )
          .then(version);
      }
      case 'core': {
        // The restore point a safe core update takes (wp-admin, wp-includes, the root PHP files), before it.
        const taking = restorePoints?.before(siteId, 'core', 'wordpress');
        const taken = await withRestorePoint(attempt, taking);
        const point = (await taking)?.restorePoint;
        return record
          .track(
            taken,
            (row) => {
              started(row);
              return services.wordpressUpdates
                .applyCore(siteId, attempt.toVersion ? { version: attempt.toVersion } : {})
                .catch(async (error: unknown) => {
                  // Refused before anything changed (not that version on offer): the copy is not needed.
                  if (point && isNothingToUpdate(error)) await restorePoints?.discard?.(siteId, point);
                  throw error;
                });
            },
            version,
          )
          .then(version);
      }
      case 'translations':
        return record
          .track(
            attempt,
            () => services.wordpressUpdates.applyTranslations(siteId),
            () => null,
          )
          .then(() => null);
    }
  }
}

export type SiteUpdater = ReturnType<typeof createSiteUpdater>;
