/**
 * What a feature declares to run its jobs through the job runner (job-runner.ts): its kind (pool,
 * exclusivity, run, shutdown, cancel, recovery) and what a job tells the runner as it goes and when
 * it settles.
 */
import type { StateDb } from '../db/state-db.js';
import type { WriteBatch } from '../db/write-batch.js';
import type { EventName, FieldsOf } from '../shared/events.js';
import type { JobRow, JobState } from './jobs.table.js';

/** A catalogued event that tells how a job ended (`backup.completed`, `restore.failed`, …). */
export interface JobEvent {
  name: EventName;
  fields: Record<string, unknown>;
}
export const jobEvent = <E extends EventName>(name: E, fields: FieldsOf<E> & Record<string, unknown>): JobEvent => ({
  name,
  fields,
});

/** How a job ended, as its kind tells the runner, which writes it to the job row. */
export interface JobOutcome {
  state: Extract<JobState, 'succeeded' | 'failed' | 'cancelled'>;
  /** A problem name, `interrupted`, `cancelled` (what a finished kind's own row says, when it says one). */
  reason?: string | null;
  message?: string | null;
  /** The job's last progress; left out, what it last reported stays. */
  progress?: object;
  /** The instant the kind's own row says it ended (the two then agree); left out, now. */
  finishedAt?: Date;
}

/** What a kind reports when a job of it settled; the runner logs it (and, for a kind whose row it writes, writes `outcome`). */
export interface Settlement {
  events: JobEvent[];
  /** Cut short by a stop of the daemon: also logged as `job.interrupted` (`failed`). */
  interrupted?: boolean;
  /** How the job ended, which the runner writes to the job row (none: `failed`, `internal-error`). */
  outcome?: JobOutcome;
}

/** What a running job tells the runner as it goes; the runner writes it to the job row. */
export interface JobContext {
  /** How far the job got (a small JSON object: files done, bytes, …). */
  progress(progress: object): void;
  /** What the job was asked, once it knows more of it (a restore: the backup it took of the site first). */
  params(params: object): void;
  /** What the job says while it runs (a safe update: waiting for the site's backup); null: nothing any more. */
  note(message: string | null): void;
  /**
   * The job's write batch: the kind's own writes held in it commit with the job row's held ones (a
   * bulk site update's history rows with its start, progress and end: a commit or two a site, not one
   * a write). What is still held when the job settles is dropped: a kind commits what it keeps (a
   * crash's half-done writes are not kept), its held start with them.
   */
  batch: WriteBatch;
  /** Held in `batch` until its next commit. */
  hold: {
    progress(progress: object): void;
    /**
     * How the job ended, written with the kind's next commit; the settlement then returns this very
     * outcome. Answers the columns as they will be stored.
     */
    outcome(outcome: JobOutcome): Pick<JobRow, 'state' | 'reason' | 'message' | 'progress' | 'finishedAt'>;
  };
}

/** A job to write, `queued` (its kind's own row, if any, is written with it). */
export interface NewJob {
  id: string;
  kind: string;
  siteId: string | null;
  params?: object;
  progress?: object;
  createdAt: Date;
}

/** A child job written with its parent (`submitWithChildren`): queued, or `ended` already (a site a bulk update cannot start). */
export interface NewChildJob extends NewJob {
  ended?: JobOutcome;
}

/** A finished job's outcome revised (what left out stays): a bulk site whose safe update decided after a restart. */
export type JobRevision = { id: string } & Partial<Pick<JobOutcome, 'state' | 'reason' | 'message' | 'progress'>>;

/**
 * A finished job revised as a parent job is written, in the same transaction (a preview marked applied by the
 * run it starts): `revision` is given the job as it is then and the id of the job written, and throws to write
 * neither (applied already).
 */
export interface Applying {
  id: string;
  revision: (current: JobRow | undefined, appliedAs: string) => Omit<JobRevision, 'id'>;
}

/** A job that ran to its end elsewhere (a backup known from an offsite target's snapshot), written as it ended. */
export interface EndedJob extends NewJob, JobOutcome {
  attempts: number;
  startedAt: Date | null;
}

/** A job the last process left running, queued again (a safe update resumes from its phase), `message` on its row. */
interface JobRequeue {
  requeue: true;
  message?: string | null;
}

/** The reason a running job's signal carries when it was cancelled through the API (not stopped by a shutdown). */
export class JobCancelled extends Error {
  constructor() {
    super('the job was cancelled');
    this.name = 'JobCancelled';
  }
}
export const wasCancelled = (signal: AbortSignal): boolean => signal.aborted && signal.reason instanceof JobCancelled;
export const CANCELLED_MESSAGE = 'cancelled on request';

/** What a kind's row said of a queued job it cancelled: the job's last progress, if it changed. */
export type QueuedCancel = { progress?: object } | void;

/** A job the last process left queued: queued again, left to its parent, or ended as the settlement says. */
type QueuedRecovery = 'requeue' | 'leave' | Settlement;

/** How a feature's kind of job runs, stops, cancels and recovers. */
export interface JobKind {
  /** Kinds naming the same pool share its `concurrency` slots (backups and restores do). */
  pool: { name: string; concurrency: number };
  /** One exclusive job per site at a time, whatever its kind (the ones that change the site). */
  exclusive: boolean;
  /**
   * Default true: an exclusive job also takes turns with the other pools' exclusive jobs of its site.
   * False for a kind that itself waits for one of them (a safe update waits for its backup): it is
   * then exclusive within its pool only, and does its site's work through the site's task queue.
   */
  siteTurn?: boolean;
  /**
   * The job's `running` write held in the job's write batch (`context.batch`), committed with
   * the kind's first commit (a bulk site update's: with its first history row), not on its own.
   */
  heldStart?: boolean;
  /**
   * Does the job (its job row already `running`), writing the kind's own row as it goes; never
   * throws on a failure of the job.
   */
  run(job: JobRow, signal: AbortSignal, context: JobContext): Promise<Settlement>;
  /** After the job settled, still in its slot (retention after a backup). */
  after?(job: JobRow): Promise<void>;
  /** At shutdown: `abort` at once, or `grace`: finish within the grace period, then abort. */
  atShutdown: 'abort' | 'grace';
  /** A running job ends `cancelled` when its signal aborts with JobCancelled; otherwise cancel answers 409. */
  cancelsWhileRunning: boolean;
  /**
   * Records a queued job as cancelled in the kind's row; the runner marks the job row in the same
   * transaction, with the progress answered here if any (a fleet action's sites, each cancelled). On the
   * daemon's SQLite database it is called without `tx`, inside the runner's synchronous transaction, and must
   * write at once (a promise there is refused); in a cluster it is given the job store's transaction, and may be async.
   */
  cancelQueued(job: JobRow, message: string, tx?: StateDb): QueuedCancel | Promise<QueuedCancel>;
  recover: {
    /**
     * A job the last process left running: record it failed as interrupted (its job ends as the
     * `outcome` says; none: `failed`, `interrupted`). `interrupted: false` when it had
     * in fact ended (its own row says so: the process stopped before the job row was written).
     * `requeue`: queued again (logged `requeued`), for a kind that resumes where it stopped.
     */
    running(job: JobRow): Settlement | JobRequeue | Promise<Settlement | JobRequeue>;
    /**
     * A job the last process left queued: queue it again (the default), record why not (`outcome`),
     * or `leave` it as it is (a child: its parent starts it, or has already ended it).
     */
    queued?(job: JobRow): QueuedRecovery | Promise<QueuedRecovery>;
    /** Once every unfinished job was handled: new jobs retrying interrupted ones (logged `retried`). */
    afterwards?(): Promise<{ job: Pick<JobRow, 'id' | 'siteId'>; fields: Record<string, unknown> }[]>;
  };
}
