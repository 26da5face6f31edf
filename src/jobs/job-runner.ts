import type { Logger } from 'pino';
import type { Actor } from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import type { Events } from '../shared/event-bus.js';
import { jobsProblems } from './jobs.errors.js';
import type { JobFilter, JobsRepository } from './jobs.repository.js';
import {
  CANCELLED_MESSAGE,
  JobCancelled,
  type JobContext,
  type JobKind,
  type NewChildJob,
  type NewJob,
  type Settlement,
} from './job-kind.js';
import { createJobRowWriter } from './job-rows.js';
import { finishedJobStates, type JobRow } from './jobs.table.js';
import { createSiteTaskQueue, type SiteTaskQueue } from './site-task-queue.js';

interface Pool {
  queue: SiteTaskQueue;
  /** Jobs scheduled in this process and not yet settled (idle(), queue depth). */
  tracked: Set<Promise<unknown>>;
  stopped: boolean;
}

interface ActiveJob {
  job: JobRow;
  kind: JobKind;
  controller: AbortController;
  done: Promise<unknown>;
}

/** Once shutdown aborts a job, how long it waits for the job to record itself before giving up on it. */
const ABORT_SETTLE_MS = 3_000;

/**
 * The one persisted-job lifecycle: features register kinds; a job is a row in `jobs` (queued →
 * running → succeeded, failed or cancelled), run in its kind's pool with bounded concurrency and
 * one exclusive job per site at a time; recovery at start, cancel and the lifecycle events of
 * every kind happen here.
 */
export function createJobRunner({
  repository,
  clock,
  logger,
  events,
}: {
  repository: JobsRepository;
  clock: Clock;
  logger: Logger;
  events: Events;
}) {
  const kinds = new Map<string, JobKind>();
  const pools = new Map<string, Pool>();
  const active = new Map<string, ActiveJob>();
  // Exclusive jobs of different pools (a backup, a site's updates) still take turns on one site.
  const siteTurns = new Map<string, Promise<unknown>>();

  function inSiteTurn(siteId: string, work: () => Promise<void>): Promise<void> {
    const turn = (siteTurns.get(siteId) ?? Promise.resolve()).then(work);
    const tail = turn.catch(() => undefined);
    siteTurns.set(siteId, tail);
    void tail.then(() => {
      if (siteTurns.get(siteId) === tail) siteTurns.delete(siteId);
    });
    return turn;
  }

  function kindOf(name: string): JobKind {
    const kind = kinds.get(name);
    if (!kind) throw new Error(`no job kind ${name} is registered`);
    return kind;
  }

  const poolsOf = (names: readonly string[]) => new Set(names.map((name) => pools.get(kindOf(name).pool.name)!));

  function announce(job: Pick<JobRow, 'id' | 'kind' | 'siteId'>, settlement: Settlement): void {
    for (const { name, fields } of settlement.events) events.emit(name, fields as never);
    if (settlement.interrupted) interrupted(job, 'failed');
  }

  function interrupted(
    job: Pick<JobRow, 'id' | 'kind' | 'siteId'>,
    action: 'requeued' | 'failed' | 'retried',
    extra: Record<string, unknown> = {},
  ): void {
    events.emit('job.interrupted', { kind: job.kind, jobId: job.id, siteId: job.siteId, action, ...extra });
  }

  /** Who asked to stop each running job still stopping, for its `job.cancelled` once it has. */
  const cancelledBy = new Map<string, Actor | undefined>();
  function cancelled(job: JobRow, state: 'queued' | 'running', by: Actor | undefined): void {
    events.emit('job.cancelled', {
      kind: job.kind,
      jobId: job.id,
      siteId: job.siteId,
      state,
      requestedByKind: by?.kind ?? null,
      requestedById: by?.id ?? null,
    });
  }

  const rows = createJobRowWriter({ repository, clock });
  const { finish, runWritten } = rows;

  async function execute(id: string, kind: JobKind): Promise<void> {
    const queued = repository.find(id);
    // Cancelled while it waited, or removed with its site.
    if (!queued || queued.state !== 'queued') return;
    const job = queued;
    const controller = new AbortController();
    const run = (running: JobRow, context: JobContext) => kind.run(running, controller.signal, context);
    const work = (async () => {
      announce(job, await runWritten(job, run, { heldStart: kind.heldStart }));
      // Only a kind that stops halfway can have been cancelled while it ran (cancel() answers 409 for the others).
      if (kind.cancelsWhileRunning && repository.find(id)?.state === 'cancelled')
        cancelled(job, 'running', cancelledBy.get(id));
      await kind.after?.(job);
    })();
    active.set(id, { job, kind, controller, done: work.catch(() => undefined) });
    try {
      await work;
    } finally {
      active.delete(id);
      cancelledBy.delete(id);
    }
  }

  function create<T = undefined>(job: NewJob, own?: () => T): { job: JobRow; own: T } {
    kindOf(job.kind);
    return rows.create(job, own);
  }

  function schedule(kindName: string, id: string, siteId: string | null): void {
    const kind = kindOf(kindName);
    const pool = pools.get(kind.pool.name)!;
    // A stopped pool leaves the job queued in the database for the next start.
    if (pool.stopped) return;
    const exclusiveSite = kind.exclusive ? siteId : null;
    const lane = exclusiveSite ? `site:${exclusiveSite}` : `job:${id}`;
    const turn = exclusiveSite && kind.siteTurn !== false ? exclusiveSite : null;
    const tracked = pool.queue
      .run(lane, () => (turn ? inSiteTurn(turn, () => execute(id, kind)) : execute(id, kind)))
      .catch((error: unknown) => logger.error({ err: error, jobId: id, kind: kindName }, 'job crashed'));
    pool.tracked.add(tracked);
    void tracked.finally(() => pool.tracked.delete(tracked));
  }

  return {
    register(name: string, kind: JobKind): void {
      if (kinds.has(name)) throw new Error(`job kind ${name} is registered twice`);
      kinds.set(name, kind);
      if (!pools.has(kind.pool.name))
        pools.set(kind.pool.name, {
          queue: createSiteTaskQueue({ concurrency: kind.pool.concurrency }),
          tracked: new Set(),
          stopped: false,
        });
    },

    /** Runs a job whose row is `queued` in the background (a parent's child it starts; recovery). */
    enqueue: schedule,

    /**
     * Writes a new job `queued` and runs it in the background; `own` writes the kind's own row (a
     * backup's) in the same transaction, so the two cannot disagree. Answers both rows.
     */
    submit<T = undefined>(job: NewJob, own?: () => T): { job: JobRow; own: T } {
      const written = create(job, own);
      schedule(job.kind, job.id, job.siteId);
      return written;
    },

    /** As `submit`, not run: the caller runs it inside its own job (`runWithin`: a restore's pre-restore backup). */
    create,

    /**
     * A parent job written `queued` with its children (queued, or ended already) in one transaction, and
     * run in the background; the parent starts each child itself (`enqueue`), or ends it unstarted
     * (`endQueued`). Answers the rows as written.
     */
    submitWithChildren(job: NewJob, children: readonly NewChildJob[]): { job: JobRow; children: JobRow[] } {
      kindOf(job.kind);
      const written = rows.createWithChildren(job, children);
      schedule(job.kind, job.id, job.siteId);
      return written;
    },

    /** Writes a job that ended elsewhere, as it ended (a backup adopted from an offsite target; a bulk update's preview), with its kind's own row. */
    record: rows.record,
    /** A queued job its parent will not start, ended as the parent says (a bulk update's site skipped or cancelled). */
    endQueued: rows.endQueued,
    /** Finished jobs' outcomes revised (a bulk site whose safe update decided after a restart; a preview applied). */
    revise: rows.revise,
    /** Runs `work` (synchronous writes through the runner and any repository on its database) in one transaction. */
    transaction: repository.transaction,

    /**
     * Runs a job created with `create` now, inside the caller's job (a restore's pre-restore
     * backup): written, logged and recovered as one the runner ran in its pool.
     */
    async runWithin(id: string, work: (job: JobRow, context: JobContext) => Promise<Settlement>): Promise<Settlement> {
      const job = repository.find(id);
      if (!job) throw new Error(`there is no job ${id} to run`);
      const settlement = await runWritten(job, work);
      announce(job, settlement);
      return settlement;
    },

    /** The kinds registered, in registration order (the API's description of `kind` names them all; a test checks). */
    kindNames(): string[] {
      return [...kinds.keys()];
    },

    get(id: string): JobRow {
      const job = repository.find(id);
      if (!job) throw jobsProblems.notFound.create(`there is no job ${id}`);
      return job;
    },

    /** Newest first. */
    list: (filter: JobFilter): JobRow[] => repository.list(filter),

    /**
     * At start, for the jobs of these kinds the last process left unfinished: running ones (it
     * was killed) fail as `interrupted`, queued ones are queued again, each as its kind decides;
     * then each kind may retry what was interrupted.
     */
    recover(kindNames: readonly string[]): { requeued: number; interrupted: number } {
      const counts = { requeued: 0, interrupted: 0 };
      for (const name of kindNames)
        for (const job of repository.unfinished(name, 'running')) {
          const kind = kindOf(name);
          const settlement = kind.recover.running(job);
          // Queued again: the loop over queued jobs below runs it (and logs it `requeued`).
          if ('requeue' in settlement) {
            repository.write(job.id, { state: 'queued', message: settlement.message ?? null });
            continue;
          }
          finish(job.id, settlement.outcome ?? { state: 'failed', reason: 'interrupted' });
          const interrupted = settlement.interrupted ?? true;
          announce(job, { ...settlement, interrupted });
          if (interrupted) counts.interrupted++;
        }
      for (const name of kindNames)
        for (const job of repository.unfinished(name, 'queued')) {
          const kind = kindOf(name);
          const decision = kind.recover.queued?.(job) ?? 'requeue';
          if (decision === 'leave') continue;
          if (decision !== 'requeue') {
            finish(job.id, decision.outcome ?? { state: 'failed', reason: 'interrupted' });
            announce(job, decision);
            continue;
          }
          schedule(name, job.id, job.siteId);
          interrupted(job, 'requeued');
          counts.requeued++;
        }
      for (const name of kindNames)
        for (const { job, fields } of kindOf(name).recover.afterwards?.() ?? [])
          interrupted({ ...job, kind: name }, 'retried', fields);
      return counts;
    },

    /**
     * A queued job is cancelled at once; a running one is asked to stop (its kind records it
     * `cancelled` when it has), or 409 when its kind cannot stop halfway.
     */
    cancel(id: string, by?: Actor): JobRow {
      const job = repository.find(id);
      if (!job) throw jobsProblems.notFound.create(`there is no job ${id}`);
      if (finishedJobStates.includes(job.state))
        throw jobsProblems.finished.create(`job ${id} is already ${job.state}`, { state: job.state });
      const running = active.get(id);
      if (job.state === 'queued' && !running) {
        // The job row first: a cancelled job stays cancelled whatever the kind's row says after it.
        repository.transaction(() => {
          repository.markCancelled(id, clock.now(), CANCELLED_MESSAGE);
          const ended = kinds.get(job.kind)?.cancelQueued(job, CANCELLED_MESSAGE);
          if (ended?.progress) repository.write(id, { progress: JSON.stringify(ended.progress) });
        });
        cancelled(job, 'queued', by);
        return repository.find(id)!;
      }
      // Started in this process, its row may still read `queued` (a start held until its first commit): it is running.
      if (!running?.kind.cancelsWhileRunning)
        throw jobsProblems.notCancellable.create(
          `job ${id} is a running ${job.kind}, which cannot be stopped halfway; wait until it has finished`,
          { state: 'running' },
        );
      cancelledBy.set(id, by);
      running.controller.abort(new JobCancelled());
      return job;
    },

    /** Jobs of these kinds' pools scheduled and not yet settled (metrics, readiness). */
    queueDepth: (kindNames: readonly string[]): number =>
      [...poolsOf(kindNames)].reduce((sum, pool) => sum + pool.tracked.size, 0),

    /** Waits for the scheduled jobs of these kinds' pools (tests, shutdown). */
    async idle(kindNames: readonly string[]): Promise<void> {
      for (const pool of poolsOf(kindNames)) while (pool.tracked.size > 0) await Promise.all([...pool.tracked]);
    },

    /**
     * Shutdown of these kinds' pools: queued jobs stay queued for the next start; running ones of
     * `abort` kinds are aborted at once, those of `grace` kinds get `graceMs` to finish first.
     * False when a `grace` job had to be aborted or a job did not settle within `settleMs`.
     */
    async stop(
      kindNames: readonly string[],
      { graceMs, settleMs = ABORT_SETTLE_MS }: { graceMs: number; settleMs?: number },
    ): Promise<boolean> {
      for (const pool of poolsOf(kindNames)) {
        pool.stopped = true;
        void pool.queue.drain(0);
        // Jobs dropped from the queue stay queued in the database; nothing waits for them now.
        pool.tracked.clear();
      }
      const mine = [...active.values()].filter((entry) => kindNames.includes(entry.job.kind));
      for (const entry of mine) if (entry.kind.atShutdown === 'abort') entry.controller.abort();
      const graceful = mine.filter((entry) => entry.kind.atShutdown === 'grace');
      const finished = await within(Promise.all(graceful.map((entry) => entry.done)), graceMs);
      for (const entry of mine) entry.controller.abort();
      const settled = await within(Promise.all(mine.map((entry) => entry.done)), settleMs);
      return finished && settled;
    },
  };
}

export type JobRunner = ReturnType<typeof createJobRunner>;

/** True if `work` settles within `ms` (any time at all when `ms` is infinite). */
async function within(work: Promise<unknown>, ms: number): Promise<boolean> {
  if (!Number.isFinite(ms)) return work.then(() => true);
  let timer: NodeJS.Timeout | undefined;
  const finished = await Promise.race([
    work.then(() => true),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
  ]);
  clearTimeout(timer);
  return finished;
}
