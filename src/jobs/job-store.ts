import { and, desc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import { firstRow, forUpdate, rowsChanged, tableFor } from '../db/dialect.js';
import type { StateDatabase, StateDb } from '../db/state-db.js';
import type { QueuedCancel } from './job-kind.js';
import type { JobReport, StoredEnd, TransactionalJobWrites } from './job-lifecycle-store.js';
import { jobFilterConditions, STATES_IN, type JobFilter } from './jobs.repository.js';
import { jobs as pgJobs } from './jobs.pg-table.js';
import { jobs as sqliteJobs, type JobRow, type NewJobRow } from './jobs.table.js';

/** Rows per insert statement: PostgreSQL takes at most 65,535 parameters, a job row has 12 columns. */
const INSERT_CHUNK = 1_000;

/**
 * The `jobs` rows on either dialect (issue 34, step 2 of docs/design/cluster-state.md): the job runner's
 * reads and writes as one body on drizzle's common query surface, every statement through the state
 * database (`state.run`, or a transaction's `tx` when given). Each read that decides a write of today's
 * repository (jobs.repository.ts, inside a SQLite transaction) is here one conditional statement, atomic
 * in both dialects whichever process writes beside it: a job is started only while queued, ended only
 * while not yet ended, revised only once ended.
 *
 * It is a `JobLifecycleStore` (job-lifecycle-store.ts): the runner can write a job's start, reports and end
 * through it on either dialect. On one machine the runner is given the same writes as the daemon's prepared
 * SQLite statements (`sqliteLifecycleStore`); the rest of its writes (a kind's write batch, a job written
 * with its kind's own row) follow when their features convert.
 */
export function createJobStore(state: StateDatabase) {
  const jobs = tableFor(state.dialect, { sqlite: sqliteJobs, postgres: pgJobs });
  const byId = (id: string) => eq(jobs.id, id);
  const find = (id: string, tx?: StateDb): Promise<JobRow | undefined> =>
    state.run((db) => db.select().from(jobs).where(byId(id)).then(firstRow), tx);
  /** Writes `changes` to the job `id` where `condition` holds; whether it did. */
  const updateIf = (id: string, changes: Partial<NewJobRow>, condition: SQL | undefined, tx?: StateDb) =>
    state.run(
      async (db) =>
        rowsChanged(
          await db
            .update(jobs)
            .set(changes)
            .where(and(byId(id), condition)),
        ) > 0,
      tx,
    );

  /** Writes `changes` to the job `id` while it is queued, and answers it as written; undefined when it is not (or is gone). */
  const updateQueued = (
    id: string,
    changes: { [Column in keyof NewJobRow]?: NewJobRow[Column] | SQL },
    tx?: StateDb,
  ): Promise<JobRow | undefined> =>
    state.run(
      (db) =>
        db
          .update(jobs)
          .set(changes)
          .where(and(byId(id), eq(jobs.state, 'queued')))
          .returning()
          .then(firstRow),
      tx,
    );

  const cancelQueued = (id: string, at: Date, message: string, tx?: StateDb): Promise<JobRow | undefined> =>
    updateQueued(id, { state: 'cancelled', reason: 'cancelled', message, finishedAt: at }, tx);

  /** A new row, as stored (the columns it leaves out at their defaults). */
  const insert = (row: NewJobRow, tx?: StateDb): Promise<JobRow> =>
    state.run(
      (db) =>
        db
          .insert(jobs)
          .values(row)
          .returning()
          .then((rows) => rows[0]!),
      tx,
    );

  /** Many rows (a bulk update's children), not read back, in statements of a thousand rows; in one transaction unless `tx` is given. */
  async function insertMany(rows: readonly NewJobRow[], tx?: StateDb): Promise<void> {
    if (rows.length === 0) return;
    const insertAll = async (db: StateDb) => {
      for (let start = 0; start < rows.length; start += INSERT_CHUNK)
        await db.insert(jobs).values(rows.slice(start, start + INSERT_CHUNK));
    };
    if (tx || rows.length <= INSERT_CHUNK) await state.run(insertAll, tx);
    else await state.transaction(insertAll);
  }

  /** Starts a queued job (`running`, one more attempt); undefined when it is no longer queued (cancelled meanwhile, gone). */
  const start = (id: string, at: Date, tx?: StateDb): Promise<JobRow | undefined> =>
    updateQueued(id, { state: 'running', startedAt: at, attempts: sql`${jobs.attempts} + 1` }, tx);

  /** Columns a running job reports (`progress`, `params`, `message`), whatever its state. */
  async function write(id: string, changes: JobReport, tx?: StateDb): Promise<void> {
    if (Object.values(changes).every((value) => value === undefined)) return;
    await state.run((db) => db.update(jobs).set(changes).where(byId(id)), tx);
  }

  /**
   * Writes how a job ended, unless it already ended (cancelled while queued) or is gone; `replacing`
   * writes over an end already written (the end its kind held, which this one replaces). Whether it wrote.
   */
  const finish = (id: string, end: StoredEnd, { replacing = false } = {}, tx?: StateDb): Promise<boolean> =>
    updateIf(id, end, replacing ? undefined : inArray(jobs.state, [...STATES_IN.unfinished]), tx);

  /** Ends a job that never started, as `end` says; a job no longer queued stays as it is. The row either way. */
  const endQueued = async (id: string, end: StoredEnd, tx?: StateDb): Promise<JobRow | undefined> =>
    (await updateQueued(id, end, tx)) ?? find(id, tx);

  /** A finished job's outcome revised; one not finished (or gone) stays as it is. Whether it wrote. */
  const revise = (id: string, end: Partial<StoredEnd>, tx?: StateDb): Promise<boolean> =>
    updateIf(id, end, inArray(jobs.state, [...STATES_IN.finished]), tx);

  const transactional: TransactionalJobWrites = {
    transaction: (body) => state.transaction(body),
    findLocked: (id, tx) => forUpdate(state.dialect, tx.select().from(jobs).where(byId(id))).then(firstRow),
    insert,
    insertMany,
    start,
    write,
    finish,
    endQueued,
    revise,
  };

  return {
    find,
    insert,

    /** A new row and its kind's own row (`own`, on the same transaction), written together or not at all. */
    insertWith: <T>(row: NewJobRow, own: (tx: StateDb) => Promise<T>): Promise<{ job: JobRow; own: T }> =>
      state.transaction(async (tx) => {
        const ownRow = await own(tx);
        const [job] = await tx.insert(jobs).values(row).returning();
        return { job: job!, own: ownRow };
      }),

    insertMany,
    start,
    write,
    finish,
    endQueued,

    /** A job left `running` by a process that died, queued again while it still is running; whether it was. */
    requeue: (id: string, message: string | null, tx?: StateDb): Promise<boolean> =>
      updateIf(id, { state: 'queued', message }, eq(jobs.state, 'running'), tx),

    revise,

    /**
     * Cancels a job that has not started, and answers it as written; undefined when it is no longer queued
     * (started, ended or gone meanwhile). A running job is ended by its own run, never from beside it.
     */
    cancelQueued,

    /**
     * Cancels a job that has not started and writes its kind's row (`own`, given the transaction) in one
     * transaction: the job as written, with the progress `own` answered if any; undefined when it is no longer queued.
     */
    cancelQueuedWith: (
      id: string,
      at: Date,
      message: string,
      own: (job: JobRow, tx: StateDb) => Promise<QueuedCancel>,
    ): Promise<JobRow | undefined> =>
      state.transaction(async (tx) => {
        const job = await cancelQueued(id, at, message, tx);
        if (!job) return undefined;
        const ended = await own(job, tx);
        if (!ended?.progress) return job;
        const progress = JSON.stringify(ended.progress);
        await updateIf(id, { progress }, undefined, tx);
        return { ...job, progress };
      }),

    /** Newest first; ids of different kinds do not sort by time, so creation time leads. */
    list(filter: JobFilter): Promise<JobRow[]> {
      return state.run((db) =>
        db
          .select()
          .from(jobs)
          .where(jobFilterConditions(jobs, filter))
          .orderBy(desc(jobs.createdAt), desc(jobs.id))
          .limit(filter.limit),
      );
    },

    /** Jobs of `kind` a previous process left in `state`, oldest first (start-up recovery). */
    unfinished: (kind: string, jobState: 'queued' | 'running'): Promise<JobRow[]> =>
      state.run((db) =>
        db
          .select()
          .from(jobs)
          .where(and(eq(jobs.kind, kind), eq(jobs.state, jobState)))
          .orderBy(jobs.id),
      ),

    transactional,
  };
}

export type JobStore = ReturnType<typeof createJobStore>;
