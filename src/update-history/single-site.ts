import {
  appliedButUnhealthy,
  mayHaveChangedFiles,
  storedPlugins,
  storedThemes,
  updateProblems,
  type AppliedUpdates,
  type Plugin,
  type Theme,
} from '../inventory/index.js';
import type { RequestedBy } from '../shared/actor.js';
import { isProblem } from '../shared/errors.js';
import type { RestorePoints } from './restore-points.js';
import type { UpdateHistoryRow } from './update-history.table.js';
import { isNothingToUpdate, requester, type UpdateAttempt, type UpdateRecorder } from './update-recorder.js';

/** The stored inventory of a site, as far as the versions of its plugins and themes go. */
export type Inventories = {
  read(siteId: string): Promise<{ pluginsJson: string; themesJson: string } | undefined>;
};

/** What a plain core update's answer says of rolling it back (wordpress-updates' `CoreUpdate['rollback']`). */
export type CoreRollback =
  | { available: true; updateId: string; restorePoint: { id: string; target: string } }
  | { available: false; reason: string };

/** The versions of a plugin or theme the inventory last read: installed, and offered. */
export async function knownVersions(inventories: Inventories, siteId: string, type: 'plugin' | 'theme', slug: string) {
  const { fromVersion, toVersion } = await knownItem(inventories, siteId, type, slug);
  return { fromVersion, toVersion };
}

/** `knownVersions`, and the item's file (a plugin's dir/file.php, a theme's stylesheet; null: not in the inventory). */
async function knownItem(inventories: Inventories, siteId: string, type: 'plugin' | 'theme', slug: string) {
  const inventory = await inventories.read(siteId);
  const list: (Plugin | Theme)[] = !inventory
    ? []
    : type === 'plugin'
      ? storedPlugins(inventory.pluginsJson, siteId)
      : storedThemes(inventory.themesJson, siteId);
  const item = list.find((candidate) => candidate.slug === slug);
  return {
    fromVersion: item?.version ?? null,
    toVersion: item?.update?.version ?? null,
    file: item ? (type === 'plugin' ? (item as Plugin).file : item.slug) : null,
  };
}

/**
 * How a single-site plugin, theme, core or translations update records itself in the update
 * history (the plugins, themes and wordpress-updates services call it around their update; a bulk
 * update records its own items, in its write batch): the restore point a plain update takes first,
 * a row as the attempt starts and its end. The from-version is the one the inventory last read (the
 * service reads the site itself just after).
 */
export function createSingleSiteRecording({
  recorder,
  inventories,
  sites,
  restorePoints,
  inventoryAfter,
}: {
  recorder: UpdateRecorder;
  inventories: Inventories;
  /** The site, to know it exists (an unknown site has no history: the service answers its own 404) and its WordPress version. */
  sites: { findById(siteId: string): Promise<{ wordpressVersion: string | null } | undefined> };
  /**
   * Taken before each plugin, theme or core update (none: updated without, as before restore
   * points); after a failure, its standalone path reads the version on disk without WordPress.
   */
  restorePoints?: Pick<RestorePoints, 'before'> & Partial<Pick<RestorePoints, 'versionOnDisk' | 'discard'>>;
  /** Patches the stored inventory with an update applied while WordPress failed (its sync cannot read it). */
  inventoryAfter?: { patch(siteId: string, applied: AppliedUpdates): Promise<boolean> };
}) {
  const exists = async (siteId: string) => (await sites.findById(siteId)) !== undefined;
  // An unknown site has no history to write to: the service answers its own 404.
  const track = async <R>(
    attempt: UpdateAttempt,
    work: (row: UpdateHistoryRow | null) => Promise<R>,
    versionOf: (result: R) => string | null,
  ) => (!(await exists(attempt.siteId)) ? work(null) : recorder.track(attempt, work, versionOf));
  const attempt = (
    siteId: string,
    type: UpdateAttempt['type'],
    slug: string | null,
    versions: object,
    { requestedBy }: RequestedBy,
  ) =>
    ({
      siteId,
      type,
      slug,
      fromVersion: null,
      toVersion: null,
      ...versions,
      trigger: requester(requestedBy),
    }) as UpdateAttempt;
  /** The restore point a plain update takes first, or why none was taken. */
  const takeRestorePoint = async (siteId: string, type: 'plugin' | 'theme' | 'core', slug: string) => {
    if (!restorePoints) return { restorePoint: null, reason: 'no restore points are taken here' } as const;
    if (!(await exists(siteId))) return { restorePoint: null, reason: `no site has the id ${siteId}` } as const;
    return restorePoints.before(siteId, type, slug);
  };
  /**
   * After a plain update failed: when the new version is on disk all the same (WordPress said so
   * before failing, or the standalone path reads it there), the update was applied and the site is
   * unhealthy: that problem is thrown (the history records it applied) and the stored inventory
   * shows the version on disk. Otherwise the failure as it was.
   */
  async function appliedDespite(
    siteId: string,
    type: 'plugin' | 'theme',
    item: { slug: string; file: string | null; fromVersion: string | null; restorePoint: string | null },
    error: unknown,
  ): Promise<never> {
    let applied = isProblem(error, updateProblems.appliedSiteUnhealthy) ? error : null;
    if (!applied && item.restorePoint && item.file && restorePoints?.versionOnDisk && mayHaveChangedFiles(error)) {
      const onDisk = await restorePoints.versionOnDisk(siteId, type, item.file);
      if (onDisk && onDisk !== item.fromVersion) applied = appliedButUnhealthy(item, onDisk, error);
    }
    if (!applied) throw error;
    if (item.file) {
      const done = new Map([[item.file, { version: String(applied.extensions.version), offer: null }]]);
      await inventoryAfter?.patch(siteId, {
        updates: null,
        info: null,
        plugins: type === 'plugin' ? done : new Map(),
        themes: type === 'theme' ? done : new Map(),
      });
    }
    throw applied;
  }

  return {
    /** A plain plugin or theme update (`apply`), recorded with the restore point it takes first. */
    async item<R extends { version: string }>(
      type: 'plugin' | 'theme',
      siteId: string,
      slug: string,
      options: RequestedBy,
      apply: () => Promise<R>,
    ): Promise<R> {
      const { file, ...versions } = await knownItem(inventories, siteId, type, slug);
      const taken = await takeRestorePoint(siteId, type, slug);
      const restorePoint = taken.restorePoint ? JSON.stringify(taken.restorePoint) : null;
      return track(
        { ...attempt(siteId, type, slug, versions, options), restorePoint },
        () =>
          apply().catch((error: unknown) =>
            appliedDespite(siteId, type, { slug, file, fromVersion: versions.fromVersion, restorePoint }, error),
          ),
        (updated) => updated.version,
      );
    },

    /**
     * A plain core update (`apply`), recorded with the restore point a safe core update takes (wp-admin,
     * wp-includes, the root PHP files) first; the answer's `rollback` says whether one was.
     */
    async core<R extends { version: string }>(
      siteId: string,
      options: { version?: string } & RequestedBy,
      apply: () => Promise<R>,
    ): Promise<R & { rollback: CoreRollback }> {
      const taken = await takeRestorePoint(siteId, 'core', 'wordpress');
      const fromVersion = (await sites.findById(siteId))?.wordpressVersion ?? null;
      let updateId: string | null = null;
      const updated = await track(
        {
          ...attempt(siteId, 'core', null, { fromVersion, toVersion: options.version ?? null }, options),
          restorePoint: taken.restorePoint ? JSON.stringify(taken.restorePoint) : null,
        },
        (row) => {
          updateId = row?.id ?? null;
          return apply().catch(async (error: unknown) => {
            // Refused before anything changed (nothing, or not that version, on offer): the copy is not needed.
            if (taken.restorePoint && isNothingToUpdate(error))
              await restorePoints?.discard?.(siteId, taken.restorePoint);
            throw error;
          });
        },
        (updated) => updated.version,
      );
      const rollback: CoreRollback =
        taken.restorePoint && updateId
          ? { available: true, updateId, restorePoint: taken.restorePoint }
          : { available: false, reason: taken.restorePoint ? 'the update was not recorded' : taken.reason };
      return { ...updated, rollback };
    },

    /** A translations update (`apply`), recorded. */
    translations: <R>(siteId: string, options: RequestedBy, apply: () => Promise<R>): Promise<R> =>
      track(attempt(siteId, 'translations', null, {}, options), apply, () => null),
  };
}

export type SingleSiteRecording = ReturnType<typeof createSingleSiteRecording>;
