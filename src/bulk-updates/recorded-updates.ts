import { updateProblems, type Plugin, type Theme } from '../inventory/index.js';
import type { Actor, RequestedBy } from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import type { PlainRestorePoints } from '../safe-updates/index.js';
import { wordpressUpdatesProblems } from '../wordpress-updates/index.js';
import { bulkUpdatesProblems, notKeptProblem } from './bulk-updates.errors.js';
import type { BulkUpdatesRepository } from './bulk-updates.repository.js';
import type { AttemptEnd, UpdateHistoryRepository } from './update-history.repository.js';
import type { UpdateAttempt, UpdateRecorder } from './update-recorder.js';

type Inventories = { read(siteId: string): { pluginsJson: string; themesJson: string } | undefined };

interface Updatable<T> {
  update(siteId: string, slug: string, options?: RequestedBy): Promise<T>;
}
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
  const inventory = inventories.read(siteId);
  const list = inventory
    ? (JSON.parse(type === 'plugin' ? inventory.pluginsJson : inventory.themesJson) as (Plugin | Theme)[])
    : [];
  const item = list.find((candidate) => candidate.slug === slug);
  return { fromVersion: item?.version ?? null, toVersion: item?.update?.version ?? null };
}

/**
 * The single-site update services with every attempt written to the update history, as a bulk
 * update's are: the composition hands these to the single-site routes. The from-version is the
 * one the inventory last read (the service reads the site itself just after).
 */
export function recordSingleSiteUpdates<
  P extends Updatable<Plugin>,
  T extends Updatable<Theme>,
  W extends WordPressUpdates<{ previousVersion: string; version: string }, { updated: unknown[] }>,
>(
  services: { plugins: P; themes: T; wordpressUpdates: W },
  {
    recorder,
    inventories,
    repository,
    restorePoints,
  }: {
    recorder: UpdateRecorder;
    inventories: Inventories;
    repository: Pick<BulkUpdatesRepository, 'sites'>;
    /** Taken before each plugin or theme update (none: updated without, as before restore points). */
    restorePoints?: Pick<PlainRestorePoints, 'before'>;
  },
): { plugins: P; themes: T; wordpressUpdates: W } {
  const known = (siteId: string, type: 'plugin' | 'theme', slug: string) =>
    knownVersions(inventories, siteId, type, slug);
  // An unknown site has no history to write to: the service answers its own 404.
  const track = <R>(attempt: UpdateAttempt, work: () => Promise<R>, versionOf: (result: R) => string | null) =>
    repository.sites({ ids: [attempt.siteId] }).length === 0 ? work() : recorder.track(attempt, work, versionOf);
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
  /** The restore point a plain update takes first, as its history row keeps it (null: none could be taken). */
  const restorePointOf = async (siteId: string, type: 'plugin' | 'theme', slug: string) => {
    if (!restorePoints || repository.sites({ ids: [siteId] }).length === 0) return null;
    const taken = await restorePoints.before(siteId, type, slug);
    return taken.restorePoint ? JSON.stringify(taken.restorePoint) : null;
  };
  const item = <S extends Updatable<Plugin | Theme>>(service: S, type: 'plugin' | 'theme'): S =>
    ({
      ...service,
      update: async (siteId: string, slug: string, options: RequestedBy = {}) =>
        track(
          {
            ...attempt(siteId, type, slug, known(siteId, type, slug), options),
            restorePoint: await restorePointOf(siteId, type, slug),
          },
          () => service.update(siteId, slug, options),
          (updated) => updated.version,
        ),
    }) as S;

  return {
    plugins: item(services.plugins, 'plugin'),
    themes: item(services.themes, 'theme'),
    wordpressUpdates: {
      ...services.wordpressUpdates,
      updateCore: (siteId: string, options: { version?: string } & RequestedBy = {}) =>
        track(
          attempt(
            siteId,
            'core',
            null,
            {
              fromVersion: repository.sites({ ids: [siteId] })[0]?.wordpressVersion ?? null,
              toVersion: options.version ?? null,
            },
            options,
          ),
          () => services.wordpressUpdates.updateCore(siteId, options),
          (updated) => updated.version,
        ),
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
}

const NOTHING_TO_UPDATE = [updateProblems.noUpdate.name, wordpressUpdatesProblems.versionNotOffered.name];

/** How a decided safe update ends its history row: kept is succeeded; rolled back, or not done, failed with why. */
function safeUpdateEnd(report: SafeUpdateReport): Omit<AttemptEnd, 'finishedAt'> {
  switch (report.status) {
    case 'kept':
      return { result: 'succeeded', toVersion: report.toVersion };
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
