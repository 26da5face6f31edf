import type { Logger } from 'pino';
import type { JobKind } from './job-kind.js';
import type { JobRow } from './jobs.table.js';

/**
 * Where the job runner's queued jobs wait and which process runs each: in this process's pools
 * (job-pools.ts, one machine) or through the cluster's PostgreSQL queue (pg-job-dispatch.ts, issue 34).
 * Either way a job runs through the runner's `execute`, which writes its row; the dispatch only decides
 * when and where, and keeps one exclusive job per site at a time.
 */
export interface JobDispatch {
  /** A kind registered: its pool made, unless a kind registered before it made it. */
  add(kind: JobKind): void;
  /**
   * Runs a job whose row is `queued`, in the background, in its pool's slot (and its site's turn). Settles once the
   * job is handed on (at once in this process; sent to the queue in a cluster): true, or false when it was not (a
   * stopped pool; in a cluster, a job the queue holds already, or a send that failed, logged). Never rejects: a job
   * not handed on stays queued in its row. `attempts`: how often the job started already (a job queued again after
   * its process died is handed on afresh, not taken for the one handed on before).
   */
  schedule(kindName: string, id: string, siteId: string | null, attempts?: number): Promise<boolean>;
  /** From now on this process runs these kinds' jobs (a worker's kinds); on one machine it runs every job it schedules. */
  work(kindNames: readonly string[]): Promise<void>;
  /** Jobs of these kinds' pools this process has scheduled or runs and not yet settled (metrics, readiness). */
  queueDepth(kindNames: readonly string[]): number;
  /** Waits for those jobs (tests, shutdown). */
  idle(kindNames: readonly string[]): Promise<void>;
  /**
   * Shutdown of these kinds' pools: queued jobs stay queued for the next start (or another process); running
   * ones of `abort` kinds are aborted at once, those of `grace` kinds get `graceMs` to finish first. False
   * when a `grace` job had to be aborted or a job did not settle within `settleMs`.
   */
  stop(kindNames: readonly string[], options: { graceMs: number; settleMs?: number }): Promise<boolean>;
  /** Lets go of what the dispatch opened (the cluster's queue), once every kind's pool is stopped. */
  close(): Promise<void>;
  /**
   * Of these `running` rows, the ones no process holds, for recovery at start to settle. On one machine, all of them
   * (nothing runs yet). In a cluster, those the queue has no job for still to run or running: a job whose end could
   * not be written, or one the queue lost. The others are another process's, or the queue hands them to one after
   * their expiry, and the runner settles them then (`execute`'s `retried`).
   */
  unheld(jobs: readonly JobRow[]): Promise<JobRow[]>;
  /**
   * Whether this process is the only one (one machine): recovery at start then retries what was interrupted
   * (`recover.afterwards`). In a cluster it would in every process that starts, so it does not.
   */
  readonly oneProcess: boolean;
}

/**
 * A job taken by this process to run, from before its start is written: what cancel and shutdown reach it by.
 * Its row may still read `queued` meanwhile (its start being written, or held until its kind's first commit).
 */
export interface ActiveJob {
  kindName: string;
  kind: JobKind;
  controller: AbortController;
  done: Promise<unknown>;
}

/** How the queue hands a job to the runner: `signal` aborts it (the queue's expiry), `retried` after a failed attempt. */
export interface ExecuteOptions {
  signal?: AbortSignal;
  /**
   * An attempt after one that failed, expired or whose process died: the job's row may still read `running` from
   * that attempt; the runner settles it first, as its kind's recovery says (queued again, or ended `interrupted`).
   */
  retried?: boolean;
}

/** What the runner gives its dispatch. */
export interface JobDispatchParts {
  logger: Logger;
  kindOf: (name: string) => JobKind;
  active: ReadonlyMap<string, ActiveJob>;
  /** Runs the job now (job-runner.ts): writes its start, runs its kind, writes its end. */
  execute: (id: string, kindName: string, kind: JobKind, options?: ExecuteOptions) => Promise<void>;
  /** The kinds registered so far. */
  kindNames: () => string[];
  /** The runner's recovery (job-recovery.ts), `retries` on where one process a time runs it (a cluster's scheduled sweep). */
  recover: (kindNames: readonly string[], options: { retries: boolean }) => Promise<unknown>;
}

export type JobDispatchFactory = (parts: JobDispatchParts) => JobDispatch;

/**
 * A job's run counted in `runs` until it settles (queue depth, idle); a run that throws (a bug: a kind never throws
 * on a failure of the job) is logged, never thrown. Answers the run as counted.
 */
export function tracked(
  runs: Set<Promise<unknown>>,
  run: Promise<void>,
  logger: Logger,
  job: { id: string; kind: string },
): Promise<void> {
  const counted = run.catch((error: unknown) =>
    logger.error({ err: error, jobId: job.id, kind: job.kind }, 'job crashed'),
  );
  runs.add(counted);
  void counted.finally(() => runs.delete(counted));
  return counted;
}

/** The runs these pools count. */
export const runsIn = (pools: Iterable<{ runs: ReadonlySet<unknown> }>): number =>
  [...pools].reduce((sum, pool) => sum + pool.runs.size, 0);

/** Waits until these pools count no run (runs started meanwhile included). */
export async function allSettled(pools: Iterable<{ runs: ReadonlySet<Promise<unknown>> }>): Promise<void> {
  for (const pool of pools) while (pool.runs.size > 0) await Promise.all([...pool.runs]);
}

/** Once shutdown aborts a job, how long it waits for the job to record itself before giving up on it. */
const ABORT_SETTLE_MS = 3_000;

/**
 * Shutdown of the jobs this process runs of these kinds: `abort` kinds aborted at once, `grace` kinds given
 * `graceMs`, then every one aborted and given `settleMs` to record itself. False when a `grace` job had to be
 * aborted or a job did not settle in time.
 */
export async function stopActive(
  active: ReadonlyMap<string, ActiveJob>,
  kindNames: readonly string[],
  { graceMs, settleMs = ABORT_SETTLE_MS }: { graceMs: number; settleMs?: number },
): Promise<boolean> {
  const mine = [...active.values()].filter((entry) => kindNames.includes(entry.kindName));
  for (const entry of mine) if (entry.kind.atShutdown === 'abort') entry.controller.abort();
  const graceful = mine.filter((entry) => entry.kind.atShutdown === 'grace');
  const finished = await within(Promise.all(graceful.map((entry) => entry.done)), graceMs);
  for (const entry of mine) entry.controller.abort();
  const settled = await within(Promise.all(mine.map((entry) => entry.done)), settleMs);
  return finished && settled;
}

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
