/**
 * The bulk update site runner: one site's items (its child job) through the site updater, its start and end held in
 * the job's write batch (the job runner writes the job row: this file tells it how the site went); and after a stop,
 * what became of that site's items (`recover`), an item left following a safe update following it as it decides
 * (`followSafeUpdate`). Its slot and its bulk job's counts: the coordinator.
 */
import type { Logger } from 'pino';
import type { JobContext, JobOutcome, Settlement } from '../jobs/job-kind.js';
import type { JobRunner } from '../jobs/job-runner.js';
import type { JobRow } from '../jobs/jobs.table.js';
import { underOwnBound } from '../jobs/site-task-queue.js';
import type { Clock } from '../shared/clock.js';
import { isAppError } from '../shared/errors.js';
import type { UpdateHistoryRepository } from '../update-history/index.js';
import { SAFE_CHILD, progressOf, unreadable, type ChildEnd, type JobRowsRead } from './bulk-jobs.js';
import {
  attemptEndOf,
  hasDecided,
  itemAfterSafeUpdate,
  siteAfterStop,
  STOPPED_BEFORE_ITEM,
  STOPPED_DURING_PLAIN,
  STOPPED_DURING_SAFE_ITEM,
  type StoppedItem,
} from './bulk-recovery.js';
import { stored, type BulkParams, type ChildParams } from './bulk-run-view.js';
import type { BulkUpdatesRepository, SafeUpdateFacts } from './bulk-updates.repository.js';
import type { ItemOutcome, SiteUpdater } from './site-updater.js';

/** What a site's updates need of their bulk job: read once a bulk job (while it runs in this process), not once a site. */
export type RunningParams = Pick<BulkParams, 'trigger' | 'safe' | 'checks'>;

export function createBulkSiteRunner({
  repository,
  history,
  jobRows,
  jobs,
  updateSite,
  clock,
  logger,
  refreshInventory,
}: {
  repository: BulkUpdatesRepository;
  /** What its recovery writes of the attempts a stop cut short. */
  history: Pick<UpdateHistoryRepository, 'finish' | 'finishSafeUpdate'>;
  jobRows: JobRowsRead;
  jobs: Pick<JobRunner, 'revise'>;
  updateSite: SiteUpdater;
  clock: Clock;
  logger: Logger;
  /** Reads a site's inventory again (after the daemon stopped during a plain update of it). */
  refreshInventory: (siteId: string) => Promise<unknown>;
}) {
  /**
   * One site's updates. Its writes go through the job's write batch: its start (held by the job runner) commits with
   * the first attempt's history row, its end with the last attempt's and the inventory patch (two commits for a site's
   * plugin and theme updates, not one per row). How it ended: the outcome for the job runner, and as its bulk job
   * counts it (a crash: failed, what the site updater still held dropped).
   */
  async function run(
    job: JobRow,
    runningParams: (bulkId: string) => RunningParams | undefined,
    { batch, hold }: Pick<JobContext, 'batch' | 'hold'>,
  ): Promise<{ outcome: JobOutcome; end: ChildEnd }> {
    let end: { outcome: JobOutcome; end: ChildEnd } | null = null;
    const outcomeOf = (outcomes: ItemOutcome[]): JobOutcome => {
      const failed = outcomes.filter((item) => item.state === 'failed');
      return {
        state: failed.length > 0 ? 'failed' : 'succeeded',
        reason: failed[0]?.reason ?? null,
        progress: { items: outcomes },
        message:
          failed.length > 0
            ? failed.map((item) => `${item.type} ${item.slug ?? ''}: ${item.message}`).join('; ')
            : null,
        finishedAt: clock.now(),
      };
    };
    const holdEnd = (outcomes: ItemOutcome[]) => {
      const outcome = outcomeOf(outcomes);
      return (end = { outcome, end: hold.outcome(outcome) });
    };
    try {
      const params = stored.childParams(job);
      const bulkParams = runningParams(params.bulkId) ?? (await bulkParamsOf(params.bulkId));
      const trigger = bulkParams?.trigger ?? { kind: 'request' as const, id: null };
      // Held as each item ends while others are still to come; once none is, the site's end (it commits with the last item's).
      const writeItems = (items: ItemOutcome[]) => {
        if (items.some((item) => item.state === 'pending')) hold.progress({ items });
        else end ??= holdEnd(items);
      };
      // Bounded by the bulk update slot it holds, not again by the site task queue's bound (SITEWARDEN_SITE_CONCURRENCY).
      const outcomes = await underOwnBound(job.siteId!, () =>
        updateSite({
          siteId: job.siteId!,
          items: params.items,
          trigger,
          jobId: params.bulkId,
          safe: bulkParams?.safe ?? false,
          ...(bulkParams?.checks ? { checks: bulkParams.checks } : {}),
          onItem: writeItems,
          batch,
        }),
      );
      const ended = end ?? holdEnd(outcomes);
      await batch.commit();
      return ended;
    } catch (error) {
      logger.error({ err: error, jobId: job.id }, 'a site update crashed');
      // (`stored-data-unreadable`: its params could not be read)
      const reason = isAppError(error) ? error.problem.name : 'internal-error';
      const outcome = { state: 'failed', reason, message: String(error), finishedAt: clock.now() } as const;
      return { outcome, end: { state: 'failed', reason, progress: job.progress } };
    }
  }

  /** A bulk job's params read from its row (a child whose bulk job is not running in this process). */
  const bulkParamsOf = async (bulkId: string): Promise<BulkParams | null> => {
    const bulk = await jobRows.find(bulkId);
    return bulk ? stored.bulkParams(bulk) : null;
  };

  /** In the background, never in the caller's way: a site that does not answer records its own sync failure. */
  const refreshSoon = (siteId: string) =>
    void Promise.resolve()
      .then(() => refreshInventory(siteId))
      .catch((error: unknown) => logger.warn({ err: error, siteId }, 'reading the inventory again failed'));

  /**
   * A site update the last process left running: each item that had not begun is skipped; one under way
   * as a safe update follows it (that safe update resumes after the restart: `followSafeUpdate`), its
   * history row now naming it; a plain one under way fails `interrupted` and the site's inventory is read
   * again, as it may or may not have the update.
   */
  async function recover(job: JobRow): Promise<Settlement> {
    let params: ChildParams;
    let saved: StoppedItem[] | undefined;
    try {
      params = stored.childParams(job);
      saved = stored.childItems(job);
    } catch (error) {
      return { events: [], outcome: unreadable(logger, job, error) };
    }
    const items: StoppedItem[] =
      saved ?? params.items.map((item) => ({ ...item, state: 'pending', reason: null, message: null }));
    const attempts = job.siteId ? await repository.attemptsOf(params.bulkId, job.siteId) : [];
    const now = clock.now();
    let cutShort = false;
    for (const item of items) {
      if (item.state !== 'pending') continue;
      const attempt = attempts.find((row) => row.type === item.type && row.slug === item.slug);
      if (!attempt) {
        Object.assign(item, { state: 'skipped', reason: 'interrupted', message: STOPPED_BEFORE_ITEM });
        continue;
      }
      // Ended, and its end committed where the item's was not: the history row says how.
      if (attempt.result !== 'running') {
        Object.assign(item, { state: attempt.result, reason: attempt.reason, message: attempt.error });
        continue;
      }
      if (job.kind === SAFE_CHILD && item.type !== 'translations') {
        const safeUpdate = attempt.safeUpdateId
          ? await repository.safeUpdate(attempt.safeUpdateId)
          : await repository.safeUpdateStartedBy(attempt);
        if (!safeUpdate) {
          await history.finish(attempt.id, {
            result: 'skipped',
            reason: 'interrupted',
            error: STOPPED_BEFORE_ITEM,
            finishedAt: now,
          });
          Object.assign(item, { state: 'skipped', reason: 'interrupted', message: STOPPED_BEFORE_ITEM });
          continue;
        }
        await repository.linkSafeUpdate(attempt.id, safeUpdate.id);
        if (hasDecided(safeUpdate)) {
          await history.finishSafeUpdate(safeUpdate.id, {
            ...attemptEndOf(safeUpdate),
            fromVersion: safeUpdate.fromVersion,
            finishedAt: now,
          });
          Object.assign(item, itemAfterSafeUpdate(item, safeUpdate));
        } else
          Object.assign(item, {
            reason: 'interrupted',
            message: STOPPED_DURING_SAFE_ITEM,
            safeUpdateId: safeUpdate.id,
          });
        continue;
      }
      await history.finish(attempt.id, {
        result: 'failed',
        reason: 'interrupted',
        error: STOPPED_DURING_PLAIN,
        finishedAt: now,
      });
      Object.assign(item, { state: 'failed', reason: 'interrupted', message: STOPPED_DURING_PLAIN });
      cutShort = true;
    }
    if (cutShort && job.siteId) refreshSoon(job.siteId);
    return { events: [], outcome: { ...siteAfterStop(items), progress: { items }, finishedAt: now } };
  }

  /**
   * A safe update a bulk item was following (the daemon stopped during it, and it resumed after the restart)
   * has decided: the item, its site and the run's counts follow. Anything else: nothing to do.
   */
  async function followSafeUpdate(safeUpdate: SafeUpdateFacts): Promise<void> {
    if (!hasDecided(safeUpdate)) return;
    const attempt = await repository.bulkAttemptOf(safeUpdate.id);
    if (!attempt?.jobId) return;
    const children = await repository.children(attempt.jobId);
    const child = children.find((row) => row.siteId === attempt.siteId);
    if (!child || child.state === 'queued' || child.state === 'running') return;
    let items: StoppedItem[];
    try {
      items = stored.childItems(child) ?? [];
    } catch (error) {
      logger.warn(
        { err: error, jobId: child.id, safeUpdateId: safeUpdate.id },
        'a site update’s items could not be read',
      );
      return;
    }
    const at = items.findIndex((item) => item.safeUpdateId === safeUpdate.id && item.state === 'pending');
    if (at < 0) return;
    items[at] = itemAfterSafeUpdate(items[at]!, safeUpdate);
    const site = { id: child.id, ...siteAfterStop(items), progress: { items } };
    // The run's counts with this site as it now ends (its other sites as they stand).
    const sites = children.map((row) =>
      row.id === child.id ? { ...row, ...site, progress: JSON.stringify(site.progress) } : row,
    );
    await jobs.revise([site, { id: attempt.jobId, progress: progressOf(sites) }]);
  }

  return { run, recover, followSafeUpdate, refreshSoon };
}

export type BulkSiteRunner = ReturnType<typeof createBulkSiteRunner>;
