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
import { isProblem } from '../shared/errors.js';
import type { Actor, RequestedBy } from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import type { PlainRestorePoints } from '../safe-updates/index.js';
import { wordpressUpdatesProblems } from '../wordpress-updates/index.js';
import { bulkUpdatesProblems, notKeptProblem } from './bulk-updates.errors.js';
import type { BulkUpdatesRepository } from './bulk-updates.repository.js';
import type { AttemptEnd, UpdateHistoryRepository } from './update-history.repository.js';
import type { UpdateHistoryRow } from './update-history.table.js';
import { isNothingToUpdate, type UpdateAttempt, type UpdateRecorder } from './update-recorder.js';

type Inventories = { read(siteId: string): { pluginsJson: string; themesJson: string } | undefined };

interface Updatable<T> {
  update(siteId: string, slug: string, options?: RequestedBy): Promise<T>;
}
/** What a plain core update's answer says of rolling it back (wordpress-updates' `CoreUpdate['rollback']`). */
type CoreRollback =
  | { available: true; updateId: string; restorePoint: { id: string; target: string } }
  | { available: false; reason: string };

interface WordPressUpdates<C, T> {
  updateCore(siteId: string, options?: { version?: string } & RequestedBy): Promise<C>;
  updateTranslations(siteId: string, options?: RequestedBy): Promise<T>;
}

/** Who asked for a single-site update: the API token or the dashboard user the request acts as (see shared/actor). */
export const requester = (actor: Actor | undefined): UpdateAttempt['trigger'] => {
  if (!actor) return { kind: 'request', id: null };
  return { kind: actor.kind === 'user' ? 'user' : 'request', id: actor.id };
};

/** The versions of a plugin or theme the inventory last read: installed, and offered. */
function knownVersions(inventories: Inventories, siteId: string, type: 'plugin' | 'theme', slug: string) {
  const { fromVersion, toVersion } = knownItem(inventories, siteId, type, slug);
  return { fromVersion, toVersion };
}

/** `knownVersions`, and the item's file (a plugin's dir/file.php, a theme's stylesheet; null: not in the inventory). */
function knownItem(inventories: Inventories, siteId: string, type: 'plugin' | 'theme', slug: string) {
  const inventory = inventories.read(siteId);
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
 * The single-site update services with every attempt written to the update history, as a bulk
 * update's are: the composition hands these to the single-site routes. The from-version is the
 * one the inventory last read (the service reads the site itself just after).
 */
export function recordSingleSiteUpdates<
  P extends Updatable<Plugin>,
  T extends Updatable<Theme>,
  W extends WordPressUpdates<
    { previousVersion: string; version: string; rollback?: CoreRollback },
    { updated: unknown[] }
  >,
>(
  services: { plugins: P; themes: T; wordpressUpdates: W },
  {
    recorder,
    inventories,
    repository,
    restorePoints,
    inventoryAfter,
  }: {
    recorder: UpdateRecorder;
    inventories: Inventories;
    repository: Pick<BulkUpdatesRepository, 'sites'>;
    /**
     * Taken before each plugin, theme or core update (none: updated without, as before restore
     * points); after a failure, its standalone path reads the version on disk without WordPress.
     */
    restorePoints?: Pick<PlainRestorePoints, 'before'> & Partial<Pick<PlainRestorePoints, 'versionOnDisk' | 'discard'>>;
    /** Patches the stored inventory with an update applied while WordPress failed (its sync cannot read it). */
    inventoryAfter?: { patch(siteId: string, applied: AppliedUpdates): boolean };
  },
): { plugins: P; themes: T; wordpressUpdates: W } {
  // An unknown site has no history to write to: the service answers its own 404.
  const track = <R>(
    attempt: UpdateAttempt,
    work: (row: UpdateHistoryRow | null) => Promise<R>,
    versionOf: (result: R) => string | null,
  ) =>
    repository.sites({ ids: [attempt.siteId] }).length === 0 ? work(null) : recorder.track(attempt, work, versionOf);
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
    if (repository.sites({ ids: [siteId] }).length === 0)
      return { restorePoint: null, reason: `no site has the id ${siteId}` } as const;
    return restorePoints.before(siteId, type, slug);
  };
  /** The restore point a plain update takes first, as its history row keeps it (null: none could be taken). */
  const restorePointOf = async (siteId: string, type: 'plugin' | 'theme', slug: string) => {
    const taken = await takeRestorePoint(siteId, type, slug);
    return taken.restorePoint ? JSON.stringify(taken.restorePoint) : null;
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
      inventoryAfter?.patch(siteId, {
        updates: null,
        info: null,
        plugins: type === 'plugin' ? done : new Map(),
        themes: type === 'theme' ? done : new Map(),
      });
    }
    throw applied;
  }

  const item = <S extends Updatable<Plugin | Theme>>(service: S, type: 'plugin' | 'theme'): S =>
    ({
      ...service,
      update: async (siteId: string, slug: string, options: RequestedBy = {}) => {
        const { file, ...versions } = knownItem(inventories, siteId, type, slug);
        const restorePoint = await restorePointOf(siteId, type, slug);
        return track(
          { ...attempt(siteId, type, slug, versions, options), restorePoint },
          () =>
            service
              .update(siteId, slug, options)
              .catch((error: unknown) =>
                appliedDespite(siteId, type, { slug, file, fromVersion: versions.fromVersion, restorePoint }, error),
              ),
          (updated) => updated.version,
        );
      },
    }) as S;

  return {
    plugins: item(services.plugins, 'plugin'),
    themes: item(services.themes, 'theme'),
    wordpressUpdates: {
      ...services.wordpressUpdates,
      // The restore point a safe core update takes (wp-admin, wp-includes, the root PHP files) first; the answer says whether one was.
      updateCore: async (siteId: string, options: { version?: string } & RequestedBy = {}) => {
        const taken = await takeRestorePoint(siteId, 'core', 'wordpress');
        let updateId: string | null = null;
        const updated = await track(
          {
            ...attempt(
              siteId,
              'core',
              null,
              {
                fromVersion: repository.sites({ ids: [siteId] })[0]?.wordpressVersion ?? null,
                toVersion: options.version ?? null,
              },
              options,
            ),
            restorePoint: taken.restorePoint ? JSON.stringify(taken.restorePoint) : null,
          },
          (row) => {
            updateId = row?.id ?? null;
            return services.wordpressUpdates.updateCore(siteId, options).catch(async (error: unknown) => {
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
      updateTranslations: (siteId: string, options: RequestedBy = {}) =>
        track(
          attempt(siteId, 'translations', null, {}, options),
          () => services.wordpressUpdates.updateTranslations(siteId, options),
          () => null,
        ),
    } as W,
  };
}

/** A safe update's report, as far as its history row needs it (the safe-updates feature's view). */
interface SafeUpdateReport {
  id: string;
  siteId: string;
  type: 'plugin' | 'theme' | 'core';
  slug: string;
  status: string;
  reason: string | null;
  message: string | null;
  fromVersion: string | null;
  toVersion: string | null;
  /** A page changed beyond the threshold: on a kept update, a warning (`visual-change` on its succeeded row). */
  visualChange?: boolean;
}

// Skipped, not failed: nothing to update, or the site was already down before the update (not the update's fault).
const NOTHING_TO_UPDATE = [
  updateProblems.noUpdate.name,
  wordpressUpdatesProblems.versionNotOffered.name,
  'site-down-before-update',
];

/** How a decided safe update ends its history row: kept is succeeded; rolled back, or not done, failed with why. */
function safeUpdateEnd(report: SafeUpdateReport): Omit<AttemptEnd, 'finishedAt'> {
  switch (report.status) {
    case 'kept':
      return {
        result: 'succeeded',
        toVersion: report.toVersion,
        ...(report.visualChange
          ? { reason: 'visual-change', error: 'kept, but a page looks different beyond the threshold (see its report)' }
          : {}),
      };
    case 'rolled-back':
    case 'rollback-failed': {
      const { problem, message } = notKeptProblem(report);
      return { result: 'failed', reason: problem.name, error: message };
    }
    default: {
      const reason = report.reason ?? bulkUpdatesProblems.notUpdatedSafely.name;
      return {
        result: NOTHING_TO_UPDATE.includes(reason) ? 'skipped' : 'failed',
        reason,
        error: report.message,
      };
    }
  }
}

/**
 * The update history of safe updates asked for through the API (a bulk update's safe items are
 * recorded by its site updater): a running row when one is queued, on the request's path so it
 * names who asked, linked to the report; finished with the decision when its job ends.
 */
export function recordSafeUpdates({
  recorder,
  history,
  inventories,
  repository,
  clock,
}: {
  recorder: UpdateRecorder;
  history: Pick<UpdateHistoryRepository, 'finishSafeUpdate'>;
  inventories: Inventories;
  repository: Pick<BulkUpdatesRepository, 'sites'>;
  clock: Clock;
}) {
  return {
    started(report: SafeUpdateReport, requestedBy: Actor | undefined): void {
      const site = repository.sites({ ids: [report.siteId] })[0];
      if (!site) return;
      const versions =
        report.type === 'core'
          ? { fromVersion: site.wordpressVersion, toVersion: report.toVersion }
          : knownVersions(inventories, report.siteId, report.type, report.slug);
      recorder.start({
        siteId: report.siteId,
        type: report.type,
        slug: report.type === 'core' ? null : report.slug,
        fromVersion: versions.fromVersion ?? null,
        toVersion: report.toVersion ?? versions.toVersion,
        trigger: requester(requestedBy),
        safeUpdateId: report.id,
      });
    },
    settled(report: SafeUpdateReport): void {
      history.finishSafeUpdate(report.id, {
        ...safeUpdateEnd(report),
        fromVersion: report.fromVersion,
        finishedAt: clock.now(),
      });
    },
  };
}
