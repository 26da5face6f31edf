import type { AsyncTransaction, HeldWrite } from '../db/write-batch.js';
import type { StateDb } from '../db/state-db.js';
import type { QueuedCancel } from './job-kind.js';
import type { JobFilter, JobsRepository } from './jobs.repository.js';
import type { JobRow, NewJobRow } from './jobs.table.js';

/**
 * A kind's own row written with its job's (a backup's, an audit's), so that the two cannot disagree: a `HeldWrite`
 * (write-batch.ts). On the daemon's SQLite database it is called without a transaction and writes at once,
 * synchronously, inside the one better-sqlite3 transaction that inserts the job row; with a store that writes in a
 * transaction of its own (`insertWith`: PostgreSQL), it is given that transaction and may be async.
 */
export type OwnRow<T> = HeldWrite<T>;

/** A job's end as stored: its state and why, and when; `progress` (JSON text) when the end says. */
export interface StoredEnd {
  state: 'succeeded' | 'failed' | 'cancelled';
  reason: string | null;
  message: string | null;
  finishedAt: Date;
  progress?: string | undefined;
}

/** What a running job reports as it goes: its progress, its params, its message. */
export type JobReport = Partial<Pick<NewJobRow, 'progress' | 'params' | 'message'>>;

/**
 * The writes of a job's lifecycle, as the runner makes them from its start to its end (job-rows.ts): on
 * either dialect `createJobStore` (job-store.ts) is one, and on the daemon's own SQLite database today's
 * prepared statements are (`sqliteLifecycleStore`). Each is one conditional statement: a job is started only
 * while queued, ended only while not yet ended (or over the end its kind held), revised only once ended.
 */
export interface JobLifecycleStore {
  find(id: string): Promise<JobRow | undefined>;
  /** A new job's row, as stored (a job written without its kind's own row). */
  insert(row: NewJobRow): Promise<JobRow>;
  /**
   * A new job's row and its kind's own row (`own`, given the transaction) in one transaction. Absent, the runner
   * writes the two in one synchronous SQLite transaction of its own (`OwnRow`).
   */
  insertWith?<T>(row: NewJobRow, own: (tx: StateDb) => Promise<T>): Promise<{ job: JobRow; own: T }>;
  /** Starts a queued job (`running`, one attempt more); undefined when it is no longer queued (cancelled meanwhile, gone). */
  start(id: string, at: Date): Promise<JobRow | undefined>;
  /** What a running job reports; written in the order reported. */
  write(id: string, changes: JobReport): Promise<void>;
  /**
   * The same, written before it returns, where the database can (SQLite's synchronous statements): a kind's reports
   * then keep their place among the writes it holds for its write batch. Absent, reports are written one after
   * the other on a chain per job, the last one before the job's end.
   */
  writeNow?(id: string, changes: JobReport): void;
  /** Writes how a job ended unless it ended already or is gone (`replacing`: over the end its kind held); whether it wrote. */
  finish(id: string, end: StoredEnd, options?: { replacing?: boolean }): Promise<boolean>;
  /** Ends a job that never started; one no longer queued stays as it is. The row either way. */
  endQueued(id: string, end: StoredEnd): Promise<JobRow | undefined>;
  /** Jobs of `kind` in `state`, oldest first (recovery at start: what a previous process left). */
  unfinished(kind: string, state: 'queued' | 'running'): Promise<JobRow[]>;
  /** Cancels a job that has not started; undefined when it is no longer queued (started, ended or gone meanwhile). */
  cancelQueued(id: string, at: Date, message: string): Promise<JobRow | undefined>;
  /**
   * As `cancelQueued`, with its kind's row (`own`, given the transaction) in the same transaction, the progress `own`
   * answers written to the job (a cluster's store). Absent, the runner does both in one synchronous SQLite transaction.
   */
  cancelQueuedWith?(
    id: string,
    at: Date,
    message: string,
    own: (job: JobRow, tx: StateDb) => Promise<QueuedCancel>,
  ): Promise<JobRow | undefined>;
  /** A job left `running` by a process that died, queued again (`message` on its row) while it still is; whether it was. */
  requeue(id: string, message: string | null): Promise<boolean>;
  /** Newest first (the jobs API's list). */
  list(filter: JobFilter): Promise<JobRow[]>;
  /**
   * A store with transactions of its own (the job store, on either dialect): the rest of the runner's writes go
   * through these, each on a `tx` — a kind's write batch, a parent written with its children, revisions, a kind's
   * hooks. Absent (the daemon's SQLite statements), they are synchronous SQLite transactions of the runner's.
   */
  transactional?: TransactionalJobWrites;
}

/** The runner's writes on a transaction of the store's (`JobLifecycleStore.transactional`). */
export interface TransactionalJobWrites {
  transaction: AsyncTransaction;
  /** The job's row, locked until the transaction ends (`for update`: a preview two requests apply at once). */
  findLocked(id: string, tx: StateDb): Promise<JobRow | undefined>;
  insert(row: NewJobRow, tx: StateDb): Promise<JobRow>;
  insertMany(rows: readonly NewJobRow[], tx: StateDb): Promise<void>;
  /** `start`, held in a kind's write batch: only while the job is queued. */
  start(id: string, at: Date, tx: StateDb): Promise<JobRow | undefined>;
  /** What a kind holds in its batch: its progress, or its end (written whatever the job's state, as `finish` replacing). */
  write(id: string, changes: JobReport, tx: StateDb): Promise<void>;
  finish(id: string, end: StoredEnd, options: { replacing?: boolean }, tx: StateDb): Promise<boolean>;
  endQueued(id: string, end: StoredEnd, tx: StateDb): Promise<JobRow | undefined>;
  revise(id: string, end: Partial<StoredEnd>, tx: StateDb): Promise<boolean>;
}

/**
 * The lifecycle's writes as the daemon's SQLite statements, prepared once (jobs.repository.ts): each runs when it
 * is called, before its promise is answered, as the runner's writes did when they were synchronous.
 */
export function sqliteLifecycleStore(repository: JobsRepository): JobLifecycleStore {
  const report = (id: string, changes: JobReport): void => void repository.write(id, changes);
  return {
    find: async (id) => repository.find(id),
    insert: async (row) => repository.insert(row),
    start: async (id, at) => repository.start(id, at),
    write: async (id, changes) => report(id, changes),
    writeNow: report,
    finish: async (id, end, { replacing = false } = {}) =>
      repository.write(id, end, replacing ? undefined : 'unfinished'),
    endQueued: async (id, end) => repository.update(id, end, 'queued') ?? repository.find(id),
    unfinished: async (kind, state) => repository.unfinished(kind, state),
    cancelQueued: async (id, at, message) => repository.cancelQueued(id, at, message),
    requeue: async (id, message) => repository.write(id, { state: 'queued', message }, 'running'),
    list: async (filter) => repository.list(filter),
  };
}
