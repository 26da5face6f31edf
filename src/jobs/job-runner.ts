import type { Logger } from 'pino';
import type { Actor } from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import type { Events } from '../shared/event-bus.js';
import { jobsProblems } from './jobs.errors.js';
import type { JobFilter, JobsRepository } from './jobs.repository.js';
import type {
  Applying,
  EndedJob,
  JobContext,
  JobKind,
  JobOutcome,
  JobRevision,
  NewChildJob,
  NewJob,
  Settlement,
} from './job-kind.js';
import type { CancelRequests } from './cancel-requests.js';
import { createJobCancel } from './job-cancel.js';
import { createJobEvents } from './job-events.js';
import { sqliteLifecycleStore, type JobLifecycleStore, type OwnRow } from './job-lifecycle-store.js';
import type { ActiveJob, ExecuteOptions, JobDispatchFactory } from './job-dispatch.js';
import { createJobPools } from './job-pools.js';
import { createJobRecovery } from './job-recovery.js';
import { createJobRowWriter } from './job-rows.js';
import type { JobRow } from './jobs.table.js';

/**
 * The one persisted-job lifecycle: features register kinds; a job is a row in `jobs` (queued →
 * running → succeeded, failed or cancelled), run in its kind's pool with bounded concurrency and
 * one exclusive job per site at a time; recovery at start, cancel and the lifecycle events of
 * every kind happen here. One object composed of its parts: where jobs wait and which process runs
 * them (its dispatch: this process's pools and the sites' turns, job-pools.ts, or the cluster's
 * queue, pg-job-dispatch.ts), the row writes (job-rows.ts), the lifecycle events (job-events.ts),
 * recovery at start (job-recovery.ts) and cancel (job-cancel.ts); here, registering kinds and
 * running a job.
 */
export function createJobRunner({
  repository: sqliteRepository,
  store = sqliteLifecycleStore(sqliteRepository!),
  dispatch: dispatchOn = createJobPools,
  cancelRequests,
  clock,
  logger,
  events,
}: (
  | {
      /** The daemon's SQLite statements (jobs.repository.ts), for what is not yet written through the store. */
      repository: JobsRepository;
      /** Where a job's start, reports and end are written (job-lifecycle-store.ts); the repository's statements unless given. */
      store?: JobLifecycleStore;
    }
  | { repository?: undefined; store: JobLifecycleStore }
) & {
  /** Where queued jobs wait and run: this process's pools unless given (a cluster's queue, pg-job-dispatch.ts). */
  dispatch?: JobDispatchFactory;
  /** Cluster mode: a running job's cancel asked of any process reaches the one running it (cancel-requests.ts). */
  cancelRequests?: CancelRequests;
  clock: Clock;
  logger: Logger;
  events: Events;
}) {
  const repository = sqliteRepository ?? sqliteOnly();
  const kinds = new Map<string, JobKind>();
  const active = new Map<string, ActiveJob>();

  function kindOf(name: string): JobKind {
    const kind = kinds.get(name);
    if (!kind) throw new Error(`no job kind ${name} is registered`);
    return kind;
  }

  const { announce, interrupted, cancelled } = createJobEvents(events);
  const dispatch = dispatchOn({
    logger,
    kindOf,
    active,
    execute,
    kindNames: () => [...kinds.keys()],
    recover: (kindNames, options) => recover(kindNames, options),
  });
  const schedule = (kindName: string, id: string, siteId: string | null) => dispatch.schedule(kindName, id, siteId);
  const { cancel, cancelledBy, stop } = createJobCancel({
    repository,
    store,
    requests: cancelRequests,
    clock,
    kinds,
    active,
    cancelled,
  });
  const rows = createJobRowWriter({ repository, store, clock, logger });
  const { finish } = rows;
  const { recover, settleLeftRunning, retryInterrupted } = createJobRecovery({
    store,
    dispatch,
    kindOf,
    finish,
    announce,
    interrupted,
  });

  async function execute(id: string, kindName: string, kind: JobKind, options: ExecuteOptions = {}): Promise<void> {
    const controller = new AbortController();
    const { signal } = options;
    const abortWithQueue = () => controller.abort(signal?.reason);
    if (signal?.aborted) abortWithQueue();
    else signal?.addEventListener('abort', abortWithQueue, { once: true });
    const work = (async () => {
      if (options.retried) {
        // The attempt before this one died or expired: its row, if still running, is settled first, as on a restart.
        const left = await store.find(id);
        if (left?.state === 'running') {
          const settled = await settleLeftRunning(left);
          // Ended `interrupted`: retried now as a restart would (an interrupted backup), not at the next recovery.
          if (settled.interrupted) await retryInterrupted([kindName]);
          if (!settled.requeued) return;
          interrupted(left, 'requeued');
        }
      }
      const started = await rows.start(id, kind.heldStart);
      // Cancelled while it waited, or removed with its site.
      if (!started) return;
      const { job } = started;
      if (cancelRequests && kind.cancelsWhileRunning) {
        // Asked to stop while no process ran it (its worker died): stopped as it starts.
        const asked = await cancelRequests.pending(id);
        if (asked) stop(id, active.get(id)!, asked.by);
      }
      const run = (running: JobRow, context: JobContext) => kind.run(running, controller.signal, context);
      announce(job, await rows.runStarted(started, run));
      // Only a kind that stops halfway can have been cancelled while it ran (cancel() answers 409 for the others).
      if (kind.cancelsWhileRunning && (await store.find(id))?.state === 'cancelled')
        cancelled(job, 'running', cancelledBy.get(id));
      await kind.after?.(job);
    })();
    // Taken before its start is written: a cancel meanwhile finds it running, not a queued row to end under it.
    active.set(id, { kindName, kind, controller, done: work.catch(() => undefined) });
    try {
      await work;
    } finally {
      signal?.removeEventListener('abort', abortWithQueue);
      if (cancelRequests && cancelledBy.has(id))
        await cancelRequests
          .forget(id)
          .catch((error: unknown) => logger.error({ err: error, jobId: id }, 'a cancel request was not forgotten'));
      active.delete(id);
      cancelledBy.delete(id);
    }
  }

  async function create<T = undefined>(job: NewJob, own?: OwnRow<T>): Promise<{ job: JobRow; own: T }> {
    kindOf(job.kind);
    return rows.create(job, own);
  }

  return {
    register(name: string, kind: JobKind): void {
      if (kinds.has(name)) throw new Error(`job kind ${name} is registered twice`);
      kinds.set(name, kind);
      dispatch.add(kind);
    },

    /** Runs a job whose row is `queued` in the background (a parent's child it starts; recovery). */
    enqueue: schedule,

    /**
     * Writes a new job `queued` and runs it in the background; `own` writes the kind's own row (a
     * backup's) in the same transaction, so the two cannot disagree. Answers both rows.
     */
    async submit<T = undefined>(job: NewJob, own?: OwnRow<T>): Promise<{ job: JobRow; own: T }> {
      const written = await create(job, own);
      await schedule(job.kind, job.id, job.siteId);
      return written;
    },

    /** As `submit`, not run: the caller runs it inside its own job (`runWithin`: a restore's pre-restore backup). */
    create,

    /**
     * A parent job written `queued` with its children (queued, or ended already) in one transaction, and
     * run in the background; the parent starts each child itself (`enqueue`), or ends it unstarted
     * (`endQueued`). `applying`: the finished job it applies, revised in the same transaction (a preview
     * marked applied by this run). Answers the rows as written.
     */
    async submitWithChildren(
      job: NewJob,
      children: readonly NewChildJob[],
      { applying }: { applying?: Applying } = {},
    ): Promise<{ job: JobRow; children: JobRow[] }> {
      kindOf(job.kind);
      const written = await rows.createWithChildren(job, children, applying);
      await schedule(job.kind, job.id, job.siteId);
      return written;
    },

    /** Writes a job that ended elsewhere, as it ended (a backup adopted from an offsite target; a bulk update's preview), with its kind's own row. */
    record: async <T = undefined>(job: EndedJob, own?: OwnRow<T>): Promise<{ job: JobRow; own: T }> =>
      rows.record(job, own),
    /**
     * The runner's writes a kind's `cancelQueued` hook makes, inside the runner's own transaction: on the `tx` the
     * hook was given (the job store's), else at once, synchronously, on SQLite (docs/design/cluster-state.md,
     * "The runner's move").
     */
    inHook: {
      /** As `endQueued`, in the hook's transaction. */
      endQueued: rows.endQueuedIn,
    },
    /** A queued job its parent will not start, ended as the parent says (a bulk update's site skipped or cancelled). */
    endQueued: (id: string, outcome: JobOutcome): Promise<JobRow | undefined> => rows.endQueued(id, outcome),
    /** Finished jobs' outcomes revised (a bulk site whose safe update decided after a restart). */
    revise: async (revisions: readonly JobRevision[]): Promise<void> => rows.revise(revisions),

    /**
     * Runs a job created with `create` now, inside the caller's job (a restore's pre-restore
     * backup): written, logged and recovered as one the runner ran in its pool.
     */
    async runWithin(id: string, work: (job: JobRow, context: JobContext) => Promise<Settlement>): Promise<Settlement> {
      const started = await rows.start(id);
      if (!started) throw new Error(`there is no queued job ${id} to run`);
      const settlement = await rows.runStarted(started, work);
      announce(started.job, settlement);
      return settlement;
    },

    /** The kinds registered, in registration order (the API's description of `kind` names them all; a test checks). */
    kindNames(): string[] {
      return [...kinds.keys()];
    },

    async get(id: string): Promise<JobRow> {
      const job = await store.find(id);
      if (!job) throw jobsProblems.notFound.create(`there is no job ${id}`);
      return job;
    },

    /** Newest first. */
    list: (filter: JobFilter): Promise<JobRow[]> => store.list(filter),

    recover,
    /** Cancels a job (job-cancel.ts): the row as it is after. */
    cancel: async (id: string, by?: Actor): Promise<JobRow> => cancel(id, by),
    /** From now on this process runs these kinds' jobs (a cluster worker's kinds; on one machine, every job it schedules). */
    work: (kindNames: readonly string[]): Promise<void> => dispatch.work(kindNames),
    queueDepth: (kindNames: readonly string[]): number => dispatch.queueDepth(kindNames),
    idle: (kindNames: readonly string[]): Promise<void> => dispatch.idle(kindNames),
    stop: (kindNames: readonly string[], options: { graceMs: number; settleMs?: number }): Promise<boolean> =>
      dispatch.stop(kindNames, options),
    /** Lets go of what the dispatch opened (a cluster's queue) once every pool is stopped. */
    close: (): Promise<void> => dispatch.close(),
  };
}

/**
 * The runner without the daemon's SQLite statements (a cluster process, issue 34): its store has transactions of its
 * own (`transactional`), so only a queued job's cancel without `cancelRequests` would reach these; it says so.
 */
function sqliteOnly(): JobsRepository {
  return new Proxy({} as JobsRepository, {
    get(_target, name) {
      throw new Error(
        `the job runner's ${String(name)} still writes through the SQLite jobs repository, which this process does not have`,
      );
    },
  });
}

export type JobRunner = ReturnType<typeof createJobRunner>;
