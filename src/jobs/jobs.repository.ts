import { and, desc, eq, inArray, lt, or, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { rowDecoder } from '../db/row-decoder.js';
import { transactionOf } from '../db/write-batch.js';
import { finishedJobStates, jobs, type JobRow, type JobState, type NewJobRow } from './jobs.table.js';

export interface JobFilter {
  /** One job (a request limited to tags reads one job through its scope's `visible`). */
  id?: string;
  siteId?: string;
  kind?: string;
  state?: JobState;
  /** Newest first: jobs before this (createdAt, id) key. */
  before?: { createdAt: Date; id: string };
  limit: number;
  /**
   * The jobs a request may see (issue 33): a condition on the jobs table its caller builds, as jobs know no
   * site scope (sites/visible-sites.ts on `jobs.site_id`, or on a fleet job's sites). Absent: every job.
   */
  visible?: SQL;
}

type JobColumn = Exclude<keyof NewJobRow, 'id'>;

/** The states a conditional write of a job requires it to be in (checked by the statement itself). */
export type JobsIn = 'queued' | 'running' | 'unfinished' | 'finished';
export const STATES_IN: Record<JobsIn, readonly JobState[]> = {
  queued: ['queued'],
  running: ['running'],
  unfinished: ['queued', 'running'],
  finished: finishedJobStates,
};

/** The columns a job filter reads, in either dialect's `jobs` table (job-store.ts's is PostgreSQL's type). */
type FilterColumns = Record<'id' | 'siteId' | 'kind' | 'state' | 'createdAt', AnyColumn>;

/** A job filter's conditions (all but `limit`), for a list newest first: creation time, then id. */
export function jobFilterConditions(
  columns: FilterColumns,
  { id, siteId, kind, state, before, visible }: JobFilter,
): SQL | undefined {
  return and(
    id === undefined ? undefined : eq(columns.id, id),
    visible,
    siteId === undefined ? undefined : eq(columns.siteId, siteId),
    kind === undefined ? undefined : eq(columns.kind, kind),
    state === undefined ? undefined : eq(columns.state, state),
    before === undefined
      ? undefined
      : or(
          lt(columns.createdAt, before.createdAt),
          and(eq(columns.createdAt, before.createdAt), lt(columns.id, before.id)),
        ),
  );
}

export function createJobsRepository({ db }: { db: Db }) {
  // Every job is found, inserted and updated a few times as it runs (a bulk update: each site's
  // child): prepared once, as building a drizzle query costs several times what SQLite spends
  // running it (bench/bulk-updates.ts). An update is prepared once per set of columns it writes.
  const transaction = transactionOf(db);
  const byId = db
    .select()
    .from(jobs)
    .where(eq(jobs.id, sql.placeholder('id')))
    .prepare();
  const jobRow = rowDecoder(jobs);
  const find = (id: string): JobRow | undefined => {
    const values = byId.values({ id })[0];
    return values && jobRow(values);
  };
  const p = (name: string) => sql`${sql.placeholder(name)}`;
  const insertValues = {
    id: p('id'),
    kind: p('kind'),
    siteId: p('siteId'),
    state: p('state'),
    reason: p('reason'),
    message: p('message'),
    progress: p('progress'),
    params: p('params'),
    attempts: p('attempts'),
    createdAt: p('createdAt'),
    startedAt: p('startedAt'),
    finishedAt: p('finishedAt'),
  };
  const insertRow = db.insert(jobs).values(insertValues).returning().prepare();
  const startRow = db
    .update(jobs)
    .set({ state: 'running', startedAt: p('startedAt'), attempts: sql`${jobs.attempts} + 1` })
    .where(and(eq(jobs.id, sql.placeholder('id')), eq(jobs.state, 'queued')))
    .returning()
    .prepare();
  const addRow = db.insert(jobs).values(insertValues).prepare();
  const updates = new Map<string, ReturnType<typeof prepareUpdate>>();
  const writes = new Map<string, ReturnType<typeof prepareWrite>>();
  // (drizzle's `set` takes placeholders only inside sql: the values go in mapped to what the column stores)
  const setOf = (columns: JobColumn[]) => Object.fromEntries(columns.map((column) => [column, p(column)]));
  const where = (only: JobsIn | undefined) =>
    and(eq(jobs.id, sql.placeholder('id')), only === undefined ? undefined : inArray(jobs.state, [...STATES_IN[only]]));
  const prepareUpdate = (columns: JobColumn[], only: JobsIn | undefined) =>
    db.update(jobs).set(setOf(columns)).where(where(only)).returning().prepare();
  const prepareWrite = (columns: JobColumn[], only: JobsIn | undefined) =>
    db.update(jobs).set(setOf(columns)).where(where(only)).prepare();
  /** The columns a change writes (undefined leaves a column as it is), and their values as stored. */
  const changed = (id: string, changes: Partial<NewJobRow>) => {
    const columns = (Object.keys(changes) as (keyof NewJobRow)[]).filter(
      (column): column is JobColumn => column !== 'id' && changes[column] !== undefined,
    );
    return { columns, values: { ...toDriver(changes), id } };
  };
  const toDriver = (changes: Partial<NewJobRow>) => {
    const values: Record<string, unknown> = {};
    // (a plain loop over the keys: a bulk update's children pass through here three times each)
    for (const column in changes) {
      const value = changes[column as keyof NewJobRow];
      if (value !== undefined && column !== 'id')
        values[column] = value === null ? null : jobs[column as JobColumn].mapToDriverValue(value as never);
    }
    return values;
  };

  /** A new row's values as stored, the columns it leaves out at their defaults. */
  const newRow = (row: NewJobRow) => ({
    siteId: null,
    reason: null,
    message: null,
    progress: '{}',
    params: '{}',
    attempts: 0,
    startedAt: null,
    finishedAt: null,
    ...toDriver(row),
    id: row.id,
  });

  /**
   * Writes `changes` to the job and answers it as written; `only`: while the job is in those states (in the same
   * statement, so nothing written beside it can slip in between), undefined when it is not (or is gone).
   */
  function update(id: string, changes: Partial<NewJobRow>, only?: JobsIn): JobRow | undefined {
    const { columns, values } = changed(id, changes);
    if (columns.length === 0) return find(id);
    const key = `${only}:${columns.join()}`;
    let prepared = updates.get(key);
    if (!prepared) updates.set(key, (prepared = prepareUpdate(columns, only)));
    return prepared.get(values);
  }
  /** `update` for a caller that does not read the row back (a bulk update's children, its progress): whether it wrote. */
  function write(id: string, changes: Partial<NewJobRow>, only?: JobsIn): boolean {
    const { columns, values } = changed(id, changes);
    if (columns.length === 0) return false;
    const key = `${only}:${columns.join()}`;
    let prepared = writes.get(key);
    if (!prepared) writes.set(key, (prepared = prepareWrite(columns, only)));
    return prepared.run(values).changes > 0;
  }

  return {
    find,
    /** For kinds with no table of their own: their job row is all there is to write. */
    insert: (row: NewJobRow): JobRow => insertRow.get(newRow(row)),
    /** Many rows, not read back (a bulk update's children), in one transaction. */
    insertMany: (rows: readonly NewJobRow[]): void =>
      transaction(() => {
        for (const row of rows) addRow.run(newRow(row));
      }),
    update,
    write,
    /** Starts a queued job (`running`, one more attempt); undefined when it is no longer queued (ended meanwhile, gone). */
    start: (id: string, at: Date): JobRow | undefined =>
      startRow.get({ id, startedAt: jobs.startedAt.mapToDriverValue(at) }),

    /** Newest first; ids of different kinds do not sort by time, so creation time leads. */
    list(filter: JobFilter): JobRow[] {
      return db
        .select()
        .from(jobs)
        .where(jobFilterConditions(jobs, filter))
        .orderBy(desc(jobs.createdAt), desc(jobs.id))
        .limit(filter.limit)
        .all();
    },

    /** Jobs of `kind` a previous process left in `state`, oldest first (start-up recovery). */
    unfinished: (kind: string, state: 'queued' | 'running'): JobRow[] =>
      db
        .select()
        .from(jobs)
        .where(and(eq(jobs.kind, kind), eq(jobs.state, state)))
        .orderBy(jobs.id)
        .all(),

    /**
     * Cancels a job that has not started, and answers it as written; undefined when it is no longer queued
     * (started, ended or gone meanwhile). A running job is ended by its own run, never from beside it.
     */
    cancelQueued: (id: string, at: Date, message: string): JobRow | undefined =>
      update(id, { state: 'cancelled', reason: 'cancelled', message, finishedAt: at }, 'queued'),

    /** Runs `work` (synchronous writes through any repository on this database) in one SQLite transaction. */
    transaction,
  };
}

export type JobsRepository = ReturnType<typeof createJobsRepository>;
