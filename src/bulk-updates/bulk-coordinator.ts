/**
 * The bulk update coordinator: the run. It submits a request's jobs (the planner's) to the job runner, which writes
 * every job row, and runs its `bulk-update` job: the sites' child jobs started as the shared slots allow, counted as
 * they settle; cancelling, the window closing, the daemon stopping; the run's end and its events, told to the runner.
 * It registers the job kinds; a site's items: the site runner.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import {
  jobEvent,
  wasCancelled,
  type Applying,
  type JobContext,
  type JobKind,
  type Settlement,
} from '../jobs/job-kind.js';
import type { JobRunner } from '../jobs/job-runner.js';
import { jobsProblems } from '../jobs/jobs.errors.js';
import { finishedJobStates, type JobRow } from '../jobs/jobs.table.js';
import type { StateDb } from '../db/state-db.js';
import type { Clock } from '../shared/clock.js';
import { isProblem } from '../shared/errors.js';
import type { Events } from '../shared/event-bus.js';
import { BULK, CHILD, SAFE_CHILD, progressOf, unreadable, type ChildEnd, type JobRowsRead } from './bulk-jobs.js';
import type { BulkPlanner, BulkUpdateRequest } from './bulk-planner.js';
import { STOPPED_BEFORE_SITE, STOPPED_DURING_RUN } from './bulk-recovery.js';
import { runView, stored, type BulkParams } from './bulk-run-view.js';
import type { BulkSiteRunner, RunningParams } from './bulk-site-runner.js';
import type { BulkUpdatesRepository } from './bulk-updates.repository.js';
import type { UpdateSlots } from './update-slots.js';

/** How many bulk jobs coordinate at once; each is cheap (the site updates share the update slots). */
const BULK_JOBS_AT_ONCE = 4;
const INTERRUPTED = STOPPED_BEFORE_SITE;
/**
 * How often a running bulk job's stored counts follow its sites: at most once this often, and when it ends. They are
 * a summary (the run's view counts its sites' rows; recovery counts them again), so a crash loses nothing by it.
 */
const PROGRESS_WRITE_MS = 1_000;
/**
 * How often a waiting bulk job reads the rows of the sites it started. In a cluster another process may run a site
 * (any worker of the `updates` kind takes it from the queue) or cancel it, and the end is told only in the process
 * that saw it (`settle`): the row tells this one. On one machine the row only confirms what `settle` told already.
 */
const STARTED_READ_MS = 2_000;

export function createBulkCoordinator({
  repository,
  jobRows,
  jobs,
  slots,
  planner,
  siteRunner,
  clock,
  events,
  logger,
}: {
  repository: BulkUpdatesRepository;
  jobRows: JobRowsRead;
  jobs: JobRunner;
  slots: UpdateSlots;
  planner: Pick<BulkPlanner, 'rowsOf'>;
  siteRunner: Pick<BulkSiteRunner, 'run' | 'recover'>;
  clock: Clock;
  events: Events;
  logger: Logger;
}) {
  /**
   * Children started by a bulk job in this process, settled when the child has run (with how it
   * ended, as written) or was cancelled while queued (then read back).
   */
  const settled = new Map<string, (ended?: ChildEnd) => void>();
  const settle = (id: string, ended?: ChildEnd) => {
    const counted = settled.get(id);
    settled.delete(id);
    counted?.(ended);
  };
  /** What the children of the bulk jobs running in this process need of them: read once a bulk job, not once a site. */
  const running = new Map<string, RunningParams>();
  /**
   * The bulk jobs running in this process, each to be told of a child cancelled on its own (`POST /api/jobs/{id}/cancel`)
   * before the bulk job started it (its row as cancelled): it leaves the child out of what it still has to start, and
   * counts it.
   */
  const droppers = new Map<string, (child: JobRow) => void>();

  /**
   * Submits the bulk job with its children (the job runner writes them together, and queues the bulk job); a dry run
   * is recorded finished, with its plan. The rows as written: the answer to the request is made from them, not read back.
   */
  async function start(
    request: BulkUpdateRequest,
    { applying }: { applying?: Applying } = {},
  ): Promise<{ job: JobRow; children: JobRow[] }> {
    const planned = await planner.rowsOf(request);
    if (planned.preview) return { job: (await jobs.record(planned.preview)).job, children: [] };
    // Started on a later turn (the job runner's queue): the rows are still what the database holds.
    const { job, children } = await jobs.submitWithChildren(planned.bulk, planned.children, { applying });
    const { items } = planned;
    events.emit('bulk-update.started', {
      bulkId: job.id,
      triggerKind: request.trigger.kind,
      triggerId: request.trigger.id,
      sites: children.length,
      items,
    });
    return { job, children };
  }

  /** A child not started: cancelled (the bulk job was), or skipped (its window closed, the daemon stopped). */
  const leaveUnstarted = async (child: JobRow, reason: string, message: string): Promise<JobRow> =>
    (await jobs.endQueued(child.id, { state: 'cancelled', reason, message })) ?? child;
  /**
   * The children still queued when the bulk job was cancelled, left unstarted in the job runner's transaction (its
   * cancel hook): at once, synchronously, on SQLite (no `tx`: the children read by a statement made at once too); on
   * the job store's `tx` in a cluster.
   */
  function leaveQueuedInHook(bulkId: string, message: string, tx?: StateDb): void | Promise<void> {
    const outcome = { state: 'cancelled', reason: 'cancelled', message } as const;
    if (!tx) {
      for (const child of repository.inHook.children(bulkId))
        if (child.state === 'queued') void jobs.inHook.endQueued(child.id, outcome);
      return;
    }
    return (async () => {
      for (const child of await repository.children(bulkId, tx))
        if (child.state === 'queued') await jobs.inHook.endQueued(child.id, outcome, tx);
    })();
  }

  /** The bulk job, `running` (the job runner wrote it): its counts through `context`, its end returned. */
  async function runBulk(job: JobRow, signal: AbortSignal, context: JobContext): Promise<Settlement> {
    const startedAt = job.startedAt ?? clock.now();
    let params: BulkParams;
    try {
      params = stored.bulkParams(job);
    } catch (error) {
      // What was asked cannot be known: no site starts, each says why.
      const outcome = unreadable(logger, job, error);
      for (const child of await repository.children(job.id))
        if (child.state === 'queued')
          await leaveUnstarted(child, outcome.reason, 'the bulk update’s stored params could not be read');
      return { events: [], outcome };
    }
    const notAfter = params.notAfter ? new Date(params.notAfter) : null;
    const children = await repository.children(job.id);
    // Counted as sites end, never by reading every child again: a bulk update may have thousands.
    const progress = progressOf(children);
    const count = (child: ChildEnd) => {
      const state = runView.siteState(child);
      if (state === 'queued' || state === 'running') return;
      progress.done++;
      progress[state]++;
    };
    // Sites not started yet, by host, each host's in their order (reversed: the next one is popped).
    const pending = new Map<string, JobRow[]>();
    for (const child of children.filter((row) => row.state === 'queued').reverse()) {
      let host: string;
      try {
        ({ host } = stored.childParams(child));
      } catch (error) {
        count((await jobs.endQueued(child.id, unreadable(logger, child, error))) ?? child);
        continue;
      }
      const queue = pending.get(host);
      if (queue) queue.push(child);
      else pending.set(host, [child]);
    }
    const leaveAll = async (reason: string, message: string) => {
      for (const queue of pending.values())
        for (const child of queue) count(await leaveUnstarted(child, reason, message));
      pending.clear();
    };
    const started = new Set<string>();
    let written = job.progress;
    let writtenAt = 0;
    // The loop sleeps until a site ends, the job is stopped, or counts not yet written may be (a long site update must
    // not hold them back); a slot another bulk job releases wakes it too. One waker, not a race over every site's promise.
    let wakeUp: (() => void) | null = null;
    const wake = () => {
      wakeUp?.();
      wakeUp = null;
    };
    let writeDue = false;
    signal.addEventListener('abort', wake, { once: true });

    /** The started sites whose rows say they ended (run or cancelled in another process), settled as their rows say. */
    let readAt = Date.now();
    const settleFromRows = async () => {
      for (const id of [...started]) {
        const row = await jobRows.find(id).catch((error: unknown) => {
          logger.warn({ err: error, jobId: id }, 'a site update’s row could not be read');
          return undefined;
        });
        if (row && finishedJobStates.includes(row.state)) settle(id, row);
      }
    };

    // Counted once, then no longer waited for: the loop ends only after its last site's count.
    const ended = (child: JobRow, end: ChildEnd) => {
      started.delete(child.id);
      count(end);
      wake();
    };
    const startChild = (child: JobRow, host: string) => {
      settled.set(child.id, (end) => {
        slots.release(host);
        if (end) return ended(child, end);
        // How it ended not told (its run crashed): as its row says, once read.
        void jobRows.find(child.id).then(
          (row) => ended(child, row ?? child),
          (error: unknown) => {
            logger.error({ err: error, jobId: child.id }, 'a site update’s row could not be read to count it');
            ended(child, child);
          },
        );
      });
      started.add(child.id);
      void jobs.enqueue(child.kind, child.id, child.siteId);
    };

    droppers.set(job.id, (cancelled) => {
      for (const [host, queue] of pending) {
        const at = queue.findIndex((child) => child.id === cancelled.id);
        if (at < 0) continue;
        queue.splice(at, 1);
        if (queue.length === 0) pending.delete(host);
        count(cancelled);
        wake();
        return;
      }
    });
    running.set(job.id, { trigger: params.trigger, safe: params.safe, checks: params.checks });
    try {
      while (pending.size > 0 || started.size > 0) {
        if (signal.aborted) {
          if (wasCancelled(signal))
            await leaveAll('cancelled', 'the bulk update was cancelled before this site started');
          else await leaveAll('interrupted', INTERRUPTED);
          // Children waiting in the job runner (behind a backup of their site) are cancelled too; running ones finish.
          for (const id of [...started])
            if ((await jobRows.find(id))?.state === 'queued') {
              try {
                // (its kind's cancel hook settles it, with its row as cancelled)
                settle(id, await jobs.cancel(id));
              } catch (error) {
                // Started meanwhile, its start held until its first commit (the row still reads queued): it
                // finishes, as the running ones do, and settles then.
                if (!isProblem(error, jobsProblems.notCancellable)) throw error;
              }
            }
        } else if (notAfter && clock.now().getTime() >= notAfter.getTime()) {
          await leaveAll('window-closed', `not started before ${notAfter.toISOString()}`);
        } else {
          // A full host is passed over for the next one; the global bound stops every host.
          for (const [host, queue] of pending) {
            while (queue.length > 0 && slots.tryTake(host)) startChild(queue.pop()!, host);
            if (queue.length === 0) pending.delete(host);
          }
        }
        if (pending.size === 0 && started.size === 0) break;
        // A write when the counts changed (a turn of the loop that started sites only changes nothing), at most once a PROGRESS_WRITE_MS.
        const counted = JSON.stringify(progress);
        if (counted !== written) {
          const wait = writtenAt + PROGRESS_WRITE_MS - Date.now();
          if (wait <= 0) {
            context.progress(progress);
            written = counted;
            writtenAt = Date.now();
          } else if (!writeDue) {
            writeDue = true;
            void sleep(wait, undefined, { ref: false }).then(() => {
              writeDue = false;
              wake();
            });
          }
        }
        // Once stopped, only the running sites are waited for (the abort has been seen).
        const woken = new Promise<void>((resolve) => (wakeUp = resolve));
        const readDue = sleep(Math.max(0, readAt + STARTED_READ_MS - Date.now()), undefined, { ref: false });
        await Promise.race(signal.aborted ? [woken, readDue] : [slots.released(), woken, readDue]);
        if (Date.now() >= readAt + STARTED_READ_MS) {
          readAt = Date.now();
          await settleFromRows();
        }
      }
    } finally {
      running.delete(job.id);
      droppers.delete(job.id);
    }

    const finishedAt = clock.now();
    const state = wasCancelled(signal)
      ? 'cancelled'
      : signal.aborted
        ? 'failed'
        : progress.failed > 0
          ? 'failed'
          : 'succeeded';
    const reason =
      state === 'cancelled' ? 'cancelled' : signal.aborted ? 'interrupted' : state === 'failed' ? 'sites-failed' : null;
    return {
      outcome: {
        state,
        reason,
        message: state === 'failed' && !signal.aborted ? `${progress.failed} of ${progress.total} sites failed` : null,
        progress,
        finishedAt,
      },
      events: [
        jobEvent('bulk-update.finished', {
          bulkId: job.id,
          state,
          total: progress.total,
          succeeded: progress.succeeded,
          failed: progress.failed,
          skipped: progress.skipped,
          cancelled: progress.cancelled,
          durationMs: finishedAt.getTime() - startedAt.getTime(),
        }),
      ],
      interrupted: signal.aborted && !wasCancelled(signal),
    };
  }

  jobs.register(BULK, {
    pool: { name: 'bulk-updates', concurrency: BULK_JOBS_AT_ONCE },
    exclusive: false,
    atShutdown: 'abort',
    cancelsWhileRunning: true,
    run: runBulk,
    cancelQueued: (job, message, tx) => leaveQueuedInHook(job.id, message, tx),
    recover: {
      // Its site updates that had not started are not started now: what was asked may be stale.
      // Its running ones were recovered first (recover()): the counts include how they ended.
      running: async (job) => {
        for (const child of await repository.children(job.id))
          if (child.state === 'queued') await leaveUnstarted(child, 'interrupted', INTERRUPTED);
        const progress = progressOf(await repository.children(job.id));
        return {
          events: [],
          outcome: { state: 'failed', reason: 'interrupted', message: STOPPED_DURING_RUN, progress },
        };
      },
    },
  });
  /** How each site update running in this process ended, until the job runner has written it (then it settles). */
  const ends = new Map<string, ChildEnd>();
  // A running site update finishes (WordPress's upgrader cannot stop halfway); its bulk job decides what starts.
  const childKind = {
    pool: { name: 'site-updates', concurrency: Number.MAX_SAFE_INTEGER },
    exclusive: true,
    // Its start commits with its first history row (the site runner's write batch).
    heldStart: true,
    atShutdown: 'grace',
    cancelsWhileRunning: false,
    run: async (job: JobRow, _signal: AbortSignal, context: JobContext): Promise<Settlement> => {
      try {
        const { outcome, end } = await siteRunner.run(job, (bulkId) => running.get(bulkId), context);
        ends.set(job.id, end);
        return { events: [], outcome };
      } catch (error) {
        settle(job.id);
        throw error;
      }
    },
    // Settled once its end is written (how, as the site runner told it), which frees its slot and counts it.
    after: (job: JobRow) => {
      const end = ends.get(job.id);
      ends.delete(job.id);
      settle(job.id, end);
      return Promise.resolve();
    },
    // Started by its bulk job (it holds a slot): settled, which frees the slot; not yet: its bulk job drops it. Either
    // counts it as cancelled (`job`: its row as the cancel wrote it, in the same transaction).
    cancelQueued: (job: JobRow) => {
      if (settled.has(job.id)) return settle(job.id, job);
      let bulkId: string;
      try {
        bulkId = stored.childParams(job).bulkId;
      } catch {
        return; // Unreadable, it was never queued by its bulk job (which failed it): nothing to drop.
      }
      droppers.get(bulkId)?.(job);
    },
    recover: {
      running: siteRunner.recover,
      // Its bulk job starts it (when requeued itself) or has already left it unstarted.
      queued: () => 'leave',
    },
  } satisfies JobKind;
  jobs.register(CHILD, childKind);
  jobs.register(SAFE_CHILD, { ...childKind, siteTurn: false });

  return { start };
}
