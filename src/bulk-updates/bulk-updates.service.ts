/**
 * Bulk updates: one `bulk-update` job per request or policy run, one `site-update` child job per
 * site. The bulk job starts its children as the shared slots allow (a global bound and one per
 * host), never two on one site at once nor beside a backup or restore of it (the children are
 * exclusive jobs); one site's failure never stops the others. This file composes the planner (what to
 * update where: bulk-planner.ts), the coordinator (the run: bulk-coordinator.ts) and the site runner (one
 * site's items: bulk-site-runner.ts), and answers for them: the runs as views, recovery at start, stopping.
 */
import type { Logger } from 'pino';
import type { JobRunner } from '../jobs/job-runner.js';
import type { JobRow } from '../jobs/jobs.table.js';
import type { Clock } from '../shared/clock.js';
import type { Events } from '../shared/event-bus.js';
import { sitesProblems } from '../sites/index.js';
import type { HistoryFilter, UpdateHistoryRepository } from '../update-history/index.js';
import { createBulkCoordinator } from './bulk-coordinator.js';
import { BULK, BULK_UPDATE_KINDS, CHILD, SAFE_CHILD, type JobRowsRead } from './bulk-jobs.js';
import { createBulkPlanner, type BulkUpdateRequest } from './bulk-planner.js';
import { STOPPED_DURING_PLAIN } from './bulk-recovery.js';
import { runView } from './bulk-run-view.js';
import { createBulkSiteRunner } from './bulk-site-runner.js';
import { bulkUpdatesProblems } from './bulk-updates.errors.js';
import type { BulkUpdatesRepository } from './bulk-updates.repository.js';
import { previewToApply } from './preview.js';
import type { SiteUpdater } from './site-updater.js';
import type { UpdateSlots } from './update-slots.js';

export type { BulkUpdateRequest } from './bulk-planner.js';

export function createBulkUpdatesService({
  repository,
  history,
  jobRows,
  jobs,
  slots,
  updateSite,
  clock,
  events,
  logger,
  refreshInventory = () => Promise.resolve(),
}: {
  repository: BulkUpdatesRepository;
  history: Pick<UpdateHistoryRepository, 'list' | 'endAbandoned' | 'finish' | 'finishSafeUpdate'>;
  /** Read only: the job runner writes every bulk update's job rows. */
  jobRows: JobRowsRead;
  jobs: JobRunner;
  slots: UpdateSlots;
  updateSite: SiteUpdater;
  clock: Clock;
  events: Events;
  logger: Logger;
  /** Reads a site's inventory again (after the daemon stopped during a plain update of it). */
  refreshInventory?: (siteId: string) => Promise<unknown>;
}) {
  const planner = createBulkPlanner({ repository, clock });
  const siteRunner = createBulkSiteRunner({
    repository,
    history,
    jobRows,
    jobs,
    updateSite,
    clock,
    logger,
    refreshInventory,
  });
  // Registers the bulk and site job kinds.
  const coordinator = createBulkCoordinator({
    repository,
    jobRows,
    jobs,
    slots,
    planner,
    siteRunner,
    clock,
    events,
    logger,
  });

  return {
    /** Queues a bulk update (or records a dry run); its job row. */
    start: async (request: BulkUpdateRequest): Promise<JobRow> => (await coordinator.start(request)).job,
    /** `start`, answered with the run as just queued (or the dry run's plan). */
    async apply(request: BulkUpdateRequest) {
      const { job, children } = await coordinator.start(request);
      return runView.of(job, children);
    },
    /**
     * Applies a preview (a dry run) as it was planned, once: the run it starts is written on the preview in the same
     * transaction, so a second apply answers `preview-already-applied` naming it.
     */
    async applyPreview(previewId: string, request: Pick<BulkUpdateRequest, 'trigger' | 'safe' | 'checks'>) {
      const { targets, checks } = previewToApply(await jobRows.find(previewId), previewId);
      const { job, children } = await coordinator.start(
        { ...request, checks: request.checks ?? checks, targets },
        {
          // Read again where the run is written: another apply may have come first.
          applying: {
            id: previewId,
            revision: (current, appliedAs) => ({
              progress: { ...previewToApply(current, previewId).progress, appliedAs },
            }),
          },
        },
      );
      return runView.of(job, children);
    },
    /** The targets a request's selection names, from the inventory rows. */
    select: planner.select,
    history: (filter: HistoryFilter) => history.list(filter),
    async requireSite(siteId: string): Promise<void> {
      if ((await repository.sites({ ids: [siteId] })).length === 0)
        throw sitesProblems.notFound.create(`there is no site with the id ${siteId}`);
    },

    /** The bulk job with each site's state and items. */
    async run(id: string) {
      const job = await jobRows.find(id);
      if (!job || job.kind !== BULK) throw bulkUpdatesProblems.notFound.create(`there is no bulk update ${id}`);
      return runView.of(job, await repository.children(id));
    },

    /** The newest bulk updates (and previews), as summaries. */
    runs: async (limit: number) => (await jobRows.list({ kind: BULK, limit })).map(runView.summary),

    /**
     * At start: the bulk updates the last process left (its site updates under way first: each item tells
     * what became of it, see the site runner's `recover`; then running bulk jobs fail as interrupted, their
     * sites not started skipped; queued ones run, from a later turn), then the other update attempts it left
     * under way end `failed` (`interrupted`) and their sites' inventories are read again, safe updates'
     * excepted (those resume and end their own). How many of those attempts were ended.
     */
    async recover(): Promise<{ attemptsEnded: number }> {
      await jobs.recover([CHILD, SAFE_CHILD, BULK]);
      const sites = await repository.sitesWithAbandonedAttempts();
      const attemptsEnded = await history.endAbandoned({
        reason: 'interrupted',
        error: STOPPED_DURING_PLAIN,
        finishedAt: clock.now(),
      });
      if (attemptsEnded > 0)
        logger.warn(
          { attempts: attemptsEnded },
          'update attempts the last process left under way were ended as interrupted',
        );
      for (const siteId of sites) siteRunner.refreshSoon(siteId);
      return { attemptsEnded };
    },
    /** A safe update decided (the update history's hook): a bulk item the daemon's stop left following it follows. */
    followSafeUpdate: siteRunner.followSafeUpdate,
    stop: (graceMs: number) => jobs.stop(BULK_UPDATE_KINDS, { graceMs }),
    idle: () => jobs.idle(BULK_UPDATE_KINDS),
  };
}
