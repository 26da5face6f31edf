/**
 * A bulk site update's plain plugin and theme items, one path for each: the site is held once
 * (`operate`: its queue, then one inventory refresh for them all), and each item takes its restore
 * point and is updated through its service's `updateExpecting`, which keeps the single-site rules
 * (the connector's plugin dependency rules, WordPress's upgraders) and updates only while the site
 * offers the version planned (the connector checks the offer in the request, or reads it first when
 * it is older than 1.5.0). A refusal ends the item skipped (`no-update-available`, `version-changed`),
 * history included. The stored inventory is then patched from the answers, or read in full.
 */
import type { StateDb } from '../db/state-db.js';
import type { WriteBatch } from '../db/write-batch.js';
import type { AppliedUpdates, Inventory } from '../inventory/index.js';
import { appliedButUnhealthy, mayHaveChangedFiles, storedPlugins, updateProblems } from '../inventory/index.js';
import type { PlainRestorePoints } from '../safe-updates/index.js';
import { isProblem } from '../shared/errors.js';
import { isNothingToUpdate, messageOf, reasonOf } from '../update-history/index.js';
import type { ConnectedSite } from '../wordpress/site-access.js';
import { withRestorePoint, type ItemOutcome, type SiteRun } from './site-outcomes.js';

/**
 * What updating an item on a held site needs of it (the plugins and themes services' `UpdatablePlugin` /
 * `UpdatableTheme`); a plugin's file unknown when it is not in the stored inventory (its service finds it).
 */
interface HeldItem {
  slug: string;
  file?: string;
  version: string;
  update: { version: string } | null;
}
interface ItemOffer {
  version: string;
  newVersion: string;
}
/** The answer to an update that named the version expected: updated, or refused as the offer changed. */
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
/** The plugins or themes service's one way to update an item on a held site. */
export interface ItemUpdates {
  /**
   * Made only when the site offers `expectedVersion` (null: any), else refused with what it has and
   * offers now; the connector's update, its failure event and problem mapping.
   */
  updateExpecting(site: ConnectedSite, item: HeldItem, expectedVersion: string | null): Promise<ExpectedUpdate>;
}
/** Holds a site (its queue) for the work, then refreshes its stored inventory once (`refresh`, or in full): SiteAccess.operate. */
export type OperateOnSite = <T>(
  siteId: string,
  work: (site: ConnectedSite) => Promise<T>,
  options: { refresh?: () => Promise<unknown> },
) => Promise<T>;
/** The stored inventory after a held site's updates: patched from what the connector answered, or read in full. */
export interface InventoryAfterUpdates {
  /**
   * Writes the patch over `applied.stored` as a write held in the site update's batch (`HeldWrite`: on its `tx`, or
   * at once on SQLite), so that it commits with the site update's other writes; false: none was stored to patch.
   */
  patch(siteId: string, applied: AppliedUpdates, tx?: StateDb): boolean | Promise<boolean>;
  /** Reads the site in full and stores what it holds. */
  sync(siteId: string): Promise<unknown>;
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

/** Updates the `held` items (plain plugins and themes, in order) on the site held once; each ends succeeded, failed or skipped. */
export async function updateHeldItems(
  run: SiteRun,
  held: ItemOutcome[],
  {
    services,
    operate,
    inventoryAfter,
    inventories,
    restorePoints,
    batch,
  }: {
    services: { plugins: ItemUpdates; themes: ItemUpdates };
    operate: OperateOnSite;
    inventoryAfter: InventoryAfterUpdates;
    /** The stored inventory, for the plugin files an update names (the planned items name slugs). */
    inventories: { read(siteId: string): Promise<Inventory | undefined> };
    restorePoints?: Partial<Pick<PlainRestorePoints, 'beforeOn' | 'versionOnDisk'>>;
    batch: WriteBatch;
  },
): Promise<void> {
  if (held.length === 0) return;
  const { siteId, record } = run;
  // Filled while the site is held; stays null (a full refresh) unless every update attempted was done.
  let applied: AppliedUpdates | null = null;
  try {
    await Promise.resolve().then(() =>
      operate(
        siteId,
        async (site) => {
          applied = await updateEach(site);
        },
        {
          // Still in the site's turn: the patch commits with the history's ends (and the caller's end, once known).
          refresh: async () => {
            const done: AppliedUpdates | null = applied;
            if (done && (await batch.commit((tx) => inventoryAfter.patch(siteId, done, tx)))) return;
            await batch.commit();
            await inventoryAfter.sync(siteId);
          },
        },
      ),
    );
  } catch (error) {
    // The site could not be held (gone, disconnected since the run began): each item not reached fails with why.
    for (const outcome of held) {
      if (outcome.state !== 'pending') continue;
      const attempt = { ...run.attempt(outcome), restorePoint: null };
      await run.settleFrom(outcome, () =>
        record.track(
          attempt,
          () => Promise.reject(error),
          () => null,
        ),
      );
    }
  }

  /**
   * One request per item (connector 1.5.0+; an older one's offers read first): the site updates
   * only when it offers the version planned, else refuses and says what it has and offers now.
   */
  async function updateEach(site: ConnectedSite): Promise<AppliedUpdates | null> {
    // Read once: for the plugin files, and as what the inventory patch after the updates starts from.
    const stored = await inventories.read(siteId);
    const files = held.some((outcome) => outcome.type === 'plugin') ? pluginFiles(siteId, stored) : null;
    const done: AppliedUpdates = { updates: null, info: null, plugins: new Map(), themes: new Map(), stored };
    let readInFull = false;
    for (const outcome of held) {
      const type = outcome.type as 'plugin' | 'theme';
      const slug = outcome.slug!;
      const file = type === 'plugin' ? files?.get(slug) : slug;
      // Not in the stored inventory: its service finds the file on the site, and the site is read in full after.
      if (!file) readInFull = true;
      const item: HeldItem = {
        slug,
        ...(file ? { file } : {}),
        version: outcome.fromVersion ?? '',
        update: outcome.toVersion === null ? null : { version: outcome.toVersion },
      };
      const answered = type === 'plugin' ? done.plugins : done.themes;
      // A refusal ends the item as an offer read before it would: why, and the version the site has (its offer's).
      const skippedAs = (offer: ItemOffer | null) => {
        const [reason, message] = offerChanged(outcome, offer);
        return { reason, message, fromVersion: offer?.version ?? outcome.fromVersion };
      };
      try {
        const started = await withRestorePoint(run.attempt(outcome), restorePoints?.beforeOn?.(site, type, slug, file));
        const answer = await record.trackEnding(
          started,
          (row) => {
            run.rowOf(outcome)(row);
            return services[`${type}s`]
              .updateExpecting(site, item, outcome.toVersion)
              .catch((error: unknown) => appliedOnDisk(type, item, started.restorePoint, error));
          },
          (answer) => {
            if (answer.result === 'updated')
              return { result: 'succeeded', fromVersion: answer.previousVersion, toVersion: answer.version };
            const { reason, message, fromVersion } = skippedAs(answer.offer);
            return { result: 'skipped', reason, error: message, fromVersion };
          },
        );
        if (answer.result === 'refused') {
          run.settle(outcome, { state: 'skipped', ...skippedAs(answer.offer) });
          // The stored offer follows what the site now offers (its state stays as stored).
          if (file && answer.version !== null) answered.set(file, { version: answer.version, offer: answer.offer });
          continue;
        }
        if (file) answered.set(file, answer);
        run.settle(outcome, { state: 'succeeded', fromVersion: answer.previousVersion, toVersion: answer.version });
      } catch (error) {
        if (isProblem(error, updateProblems.appliedSiteUnhealthy)) {
          // The new version is on disk all the same: applied (the inventory shows it), with the site failing after it.
          const version = String(error.extensions.version);
          if (file) answered.set(file, { version, offer: null });
          run.settle(outcome, {
            state: 'succeeded',
            toVersion: version,
            reason: reasonOf(error),
            message: messageOf(error),
          });
          continue;
        }
        const state = isNothingToUpdate(error) ? 'skipped' : 'failed';
        run.settle(outcome, { state, reason: reasonOf(error), message: messageOf(error) });
        // An update that failed may leave the site other than it was (WordPress's upgrader removes the old copy first).
        readInFull = true;
      }
    }
    return readInFull ? null : done;
  }

  /**
   * A plain update whose request failed (the site failed, not refused) after taking its restore
   * point: when the standalone path reads a new version on disk, it was applied all the same, and
   * the site is unhealthy (`update-applied-site-unhealthy`, which the history records applied).
   */
  async function appliedOnDisk(
    type: 'plugin' | 'theme',
    item: HeldItem,
    restorePoint: string | null | undefined,
    error: unknown,
  ): Promise<never> {
    if (item.file && restorePoint && restorePoints?.versionOnDisk && mayHaveChangedFiles(error)) {
      const onDisk = await restorePoints.versionOnDisk(siteId, type, item.file);
      if (onDisk && onDisk !== item.version)
        throw appliedButUnhealthy({ slug: item.slug, fromVersion: item.version || null }, onDisk, error);
    }
    throw error;
  }
}
