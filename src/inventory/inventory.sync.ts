import type { Events } from '../shared/event-bus.js';
import type { StateDb } from '../db/state-db.js';
import type { SiteTaskQueue } from '../jobs/site-task-queue.js';
import { latestSlotAt, siteOffsetMs } from '../jobs/spread.js';
import type { JobMetrics } from '../metrics/metrics.js';
import type { Clock } from '../shared/clock.js';
import { isAppError } from '../shared/errors.js';
import type { SecretBox } from '../shared/secret-box.js';
import { siteCredentials, type SiteRow, type SitesRepository } from '../sites/index.js';
import type { AvailableUpdates, Connector } from '../wordpress/connector-client.js';
import type { SiteAccess } from '../wordpress/site-access.js';
import { timeZoneFromWordPress } from '../shared/time-zone.js';
import type { ConnectorInfo } from '../wordpress/connector-client.js';
import {
  pluginFromWordPress,
  storedPlugins,
  storedThemes,
  type Plugin,
  type Theme,
  themeFromWordPress,
  withPluginRequirements,
  withPluginUpdates,
  withThemeUpdates,
} from './inventory.schemas.js';
import type { Inventory, InventoryLists, InventoryRepository, SiteExtras } from './inventory.repository.js';

const UPDATE_CHECK_MAX_AGE_MS = 12 * 60 * 60_000;
const RETRY_FAILED_AFTER_MS = 60 * 60_000;
const MAX_SYNCS_PER_TICK = 500;

/** What connector 1.4.0+ adds to the inventory; an older one leaves it unknown (null, no offers). */
function extrasOf(info: ConnectorInfo | null, updates: AvailableUpdates | null): SiteExtras {
  return {
    databaseType: info?.database?.type ?? null,
    databaseVersion: info?.database?.version ?? null,
    timeZone: info?.timezone ? timeZoneFromWordPress(info.timezone.string, info.timezone.gmtOffset) : null,
    coreOffers: updates?.core?.map((offer) => offer.version) ?? [],
    translations: updates?.translations ?? [],
  };
}

/** What the connector answered of an updated item (1.5.0+ with an expected version: its offer left, a plugin's requirements). */
interface AppliedItem {
  version: string;
  offer?: { newVersion: string } | null;
}

/**
 * What a batch of updates on a held site told: the offers read at its start (null: none was read,
 * as each update checked its own offer on the site) and the info if one was read (the connector's,
 * in the same session; null keeps the stored environment) and each plugin (by file) and theme (by
 * stylesheet) the connector answered as updated, with the version it now runs and whether it is active.
 */
export interface AppliedUpdates {
  updates: AvailableUpdates | null;
  info: ConnectorInfo | null;
  /** `active` unknown (undefined) for an item the connector refused to update: its state stays as stored. */
  plugins: Map<string, AppliedItem & { active?: boolean; requires?: string[] }>;
  themes: Map<string, AppliedItem>;
  /** The stored inventory as read while the site was held, before its updates (one read less); read again when absent. */
  stored?: Inventory;
}

/** The offers left once `applied` are done: an applied item's offer was the one it was updated to. */
function remainingOffers({
  updates,
  plugins,
  themes,
}: AppliedUpdates & { updates: AvailableUpdates }): AvailableUpdates {
  const without = <O>(offers: Record<string, O>, done: Map<string, unknown>) =>
    Object.fromEntries(Object.entries(offers).filter(([key]) => !done.has(key)));
  return { ...updates, plugins: without(updates.plugins, plugins), themes: without(updates.themes, themes) };
}

/**
 * Keeps each connected site's stored inventory fresh, in the background, so the API answers
 * from the database and a slow site never makes it slow.
 */
export function createInventorySync({
  repository,
  inventories,
  access,
  secrets,
  queue,
  clock,
  events,
  intervalMinutes,
  metrics,
}: {
  repository: SitesRepository;
  inventories: InventoryRepository;
  access: Pick<SiteAccess, 'open'>;
  secrets: SecretBox;
  queue: SiteTaskQueue;
  clock: Clock;
  events: Events;
  intervalMinutes: number;
  metrics?: JobMetrics;
}) {
  /** WordPress's own update check may be stale (or never ran where WP-Cron is off); renew it twice a day. */
  async function freshUpdates(connector: Connector): Promise<AvailableUpdates> {
    const updates = await connector.updates();
    const checkedAt = updates.checkedAt ? Date.parse(updates.checkedAt) : NaN;
    if (Number.isFinite(checkedAt) && clock.now().getTime() - checkedAt < UPDATE_CHECK_MAX_AGE_MS) return updates;
    return connector.updates({ refresh: true });
  }

  /** Reads plugins and themes from the site now and stores them. Failures are recorded, not thrown. */
  async function syncNow(siteId: string): Promise<SiteRow | undefined> {
    const site = await repository.findById(siteId);
    if (!site || site.state !== 'connected') return site;
    const attemptAt = clock.now();
    try {
      const { session, connector } = access.open(siteCredentials(site, secrets));
      const [plugins, themes, info] = await Promise.all([
        session.listPlugins(),
        session.listThemes(),
        connector.info(),
      ]);
      const updates = info ? await freshUpdates(connector) : null;
      const syncedAt = clock.now();
      const bySlug = (a: { slug: string }, b: { slug: string }) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0);
      // The session refused lists over MAX_PLUGINS_PER_SITE / MAX_THEMES_PER_SITE, so what is stored stays bounded.
      await inventories.write(site.id, {
        plugins: withPluginRequirements(withPluginUpdates(plugins.map(pluginFromWordPress), updates), updates).sort(
          bySlug,
        ),
        themes: withThemeUpdates(themes.map(themeFromWordPress), updates).sort(bySlug),
        syncedAt,
        extras: info ? extrasOf(info, updates) : undefined,
      });
      metrics?.observeJob('sync', 'completed', syncedAt.getTime() - attemptAt.getTime());
      if (site.syncError) events.emit('site.sync_recovered', { siteId: site.id, url: site.url });
      const versions = info
        ? { connectorVersion: info.connector, wordpressVersion: info.wordpress, phpVersion: info.php }
        : { connectorVersion: null };
      return await repository.update(site.id, {
        ...versions,
        lastSyncedAt: syncedAt,
        lastSyncAttemptAt: attemptAt,
        syncError: null,
        updatedAt: syncedAt,
      });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      metrics?.observeJob('sync', 'failed', clock.now().getTime() - attemptAt.getTime());
      events.emit('site.sync_failed', { siteId: site.id, url: site.url, reason });
      // A connector too old for the sync still named its version: kept, so operations are refused up front.
      const outdated = isAppError(error) && error.problem.name === 'connector-outdated';
      const learned = outdated ? { connectorVersion: String(error.extensions.connectorVersion) } : {};
      return repository.update(site.id, {
        ...learned,
        lastSyncAttemptAt: attemptAt,
        syncError: reason,
        updatedAt: attemptAt,
      });
    }
  }

  // Each site's slot in the interval, hashed once per process (a removed site's entry is a few bytes).
  const slotOffsets = new Map<string, number>();

  /**
   * After updates the connector reported as done, patches the stored inventory from its answers
   * (no request to the site): the updated plugins and themes at their new versions with no update
   * pending, the other offers as read at the batch's start. What an update may change beyond that
   * (a plugin's name or requirements, new language packs) waits for the next scheduled sync, as does
   * `lastSyncedAt`. False when no inventory is stored to patch (then a full sync is due).
   */
  async function patchApplied(siteId: string, applied: AppliedUpdates): Promise<boolean> {
    const stored = applied.stored ?? (await inventories.read(siteId));
    if (!stored) return false;
    await inventories.write(siteId, patchOf(siteId, stored, applied));
    return true;
  }

  /**
   * `patchApplied` written inside the transaction of the caller's write batch (a bulk site update's: the patch
   * commits with the history's ends): on its `tx`, or at once on SQLite (`HeldWrite`). From the inventory the caller
   * read while the site was held (`applied.stored`): false when it read none (then a full sync is due).
   */
  function patchAppliedWithin(siteId: string, applied: AppliedUpdates, tx?: StateDb): boolean | Promise<boolean> {
    if (!applied.stored) return false;
    const written = inventories.writeWithin(siteId, patchOf(siteId, applied.stored, applied), tx);
    return written ? written.then(() => true) : true;
  }

  /** What `patchApplied` writes over `stored`. */
  function patchOf(siteId: string, stored: Inventory, applied: AppliedUpdates): InventoryLists {
    if (!applied.updates) return updatedItemsPatch(siteId, stored, applied);
    const updates = remainingOffers({ ...applied, updates: applied.updates });
    const plugins = storedPlugins(stored.pluginsJson, siteId).map((plugin): Plugin => {
      const done = applied.plugins.get(plugin.file);
      const status = done?.active === false ? 'inactive' : plugin.status;
      return { ...plugin, version: done?.version ?? plugin.version, status, update: null };
    });
    const themes = storedThemes(stored.themesJson, siteId).map((theme): Theme => ({
      ...theme,
      version: applied.themes.get(theme.slug)?.version ?? theme.version,
      update: null,
    }));
    return {
      plugins: withPluginRequirements(withPluginUpdates(plugins, updates), updates),
      themes: withThemeUpdates(themes, updates),
      syncedAt: stored.syncedAt,
      extras: extrasOf(applied.info, updates),
      keepEnvironment: !applied.info,
      seenAt: clock.now(),
    };
  }

  /**
   * The patch without an offers read: only the updated items change (their version, state,
   * the offer the connector says is left, a plugin's requirements); every other offer, and the core
   * and translation offers, stay as stored until the next sync.
   */
  function updatedItemsPatch(siteId: string, stored: Inventory, applied: AppliedUpdates): InventoryLists {
    const offered = (done: AppliedItem) => (done.offer ? { version: done.offer.newVersion } : null);
    let requirementsChanged = false;
    // The item rows and offers of only these are written again.
    const only = new Set<string>();
    // A list none of whose items was updated stays as stored (its JSON not read nor written again).
    const plugins =
      applied.plugins.size === 0
        ? null
        : storedPlugins(stored.pluginsJson, siteId).map((plugin): Plugin => {
            const done = applied.plugins.get(plugin.file);
            if (!done) return plugin;
            only.add(`plugin\t${plugin.slug}`);
            const requires = done.requires ? [...done.requires].sort() : (plugin.requires ?? null);
            if (requires?.join() !== plugin.requires?.join()) requirementsChanged = true;
            const status = done.active === false ? 'inactive' : plugin.status;
            return { ...plugin, version: done.version, status, update: offered(done), requires };
          });
    const themes =
      applied.themes.size === 0
        ? null
        : storedThemes(stored.themesJson, siteId).map((theme): Theme => {
            const done = applied.themes.get(theme.slug);
            if (!done) return theme;
            only.add(`theme\t${theme.slug}`);
            return { ...theme, version: done.version, update: offered(done) };
          });
    return {
      // Dependents follow the requirements: worked out again when an update changed one and every plugin's are known.
      plugins:
        plugins && requirementsChanged && plugins.every((plugin) => plugin.requires)
          ? withPluginRequirements(plugins, {
              requires: Object.fromEntries(plugins.map((plugin) => [plugin.file, plugin.requires ?? []])),
            })
          : plugins,
      themes,
      syncedAt: stored.syncedAt,
      keepEnvironment: true,
      only,
      seenAt: clock.now(),
    };
  }

  return {
    syncNow,
    patchApplied,
    patchAppliedWithin,
    /** `patchApplied`, or a full sync when no inventory is stored. */
    recordApplied: async (siteId: string, applied: AppliedUpdates): Promise<unknown> =>
      (await patchApplied(siteId, applied)) ? undefined : syncNow(siteId),
    /** On demand: a sync queued for each site not already syncing or busy; answers how many were queued. */
    enqueue(siteIds: readonly string[]): number {
      const idle = siteIds.filter((id) => !queue.isBusy(id));
      for (const id of idle) void queue.run(id, () => syncNow(id)).catch(() => undefined);
      return idle.length;
    },
    /**
     * Scheduler tick: enqueue a sync for every connected site whose slot in the interval came
     * since its last attempt (a fixed slot per site, so syncs stay spread however sites were
     * connected), and for failed ones an hour after the failure; the longest-waiting first.
     */
    async enqueueDue(): Promise<number> {
      const now = clock.now();
      const intervalMs = intervalMinutes * 60_000;
      const retryBefore = now.getTime() - RETRY_FAILED_AFTER_MS;
      const slotDue = (id: string, last: Date | null) => {
        let offset = slotOffsets.get(id);
        if (offset === undefined) slotOffsets.set(id, (offset = siteOffsetMs(id, intervalMs)));
        return last === null || last < latestSlotAt(offset, intervalMs, now);
      };
      const due = (await repository.syncAttempts())
        .filter(
          (site) =>
            (slotDue(site.id, site.lastSyncAttemptAt) ||
              (site.failed && (site.lastSyncAttemptAt?.getTime() ?? 0) <= retryBefore)) &&
            !queue.isBusy(site.id),
        )
        .sort((a, b) => (a.lastSyncAttemptAt?.getTime() ?? 0) - (b.lastSyncAttemptAt?.getTime() ?? 0))
        .slice(0, MAX_SYNCS_PER_TICK);
      for (const site of due) void queue.run(site.id, () => syncNow(site.id)).catch(() => undefined);
      return due.length;
    },
  };
}
