import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { updateHistory, type UpdateHistoryRow } from './update-history.table.js';

/** What an attempt's end writes: how it ended, the version the site reports (null keeps the one expected), why not. */
export interface AttemptEnd {
  result: UpdateHistoryRow['result'];
  /** The version the site reported it had, when it says (else the one the attempt started with). */
  fromVersion?: string | null;
  toVersion?: string | null;
  reason?: string | null;
  error?: string | null;
  /** The safe update the attempt ran as, learnt as it ended (a safe item of a bulk update). */
  safeUpdateId?: string | null;
  finishedAt: Date;
}

/** An attempt's row as it starts: not finished, and with no restore point or rollback unless it names one. */
export type StartedRow = Omit<UpdateHistoryRow, 'finishedAt' | 'reason' | 'error' | 'restorePoint' | 'rollbackOf'> &
  Partial<Pick<UpdateHistoryRow, 'restorePoint' | 'rollbackOf'>>;

/** The row as stored once `row` started: what it leaves out null. */
export const startedRow = (row: StartedRow): UpdateHistoryRow => ({
  restorePoint: null,
  rollbackOf: null,
  ...row,
  finishedAt: null,
  reason: null,
  error: null,
});

/** An end's values: what it leaves out is null (the versions and the safe update then kept as started). */
export const endValues = (end: AttemptEnd) => ({
  fromVersion: null,
  toVersion: null,
  reason: null,
  error: null,
  safeUpdateId: null,
  ...end,
});

/**
 * Every attempt writes a row as it starts and again as it ends: on SQLite these statements are prepared once,
 * as building a drizzle query costs about ten times what SQLite spends running it (bench/bulk-updates.ts). They
 * run at once, synchronously: inside `state.run` for the repository's async methods, and as they are inside a
 * SQLite transaction the caller holds (a bulk site update's write batch, a job kind's synchronous hook).
 */
export function preparedWrites(db: Db) {
  const p = <K extends string>(name: K) => sql.placeholder(name);
  const insertStarted = db
    .insert(updateHistory)
    .values({
      id: p('id'),
      siteId: p('siteId'),
      type: p('type'),
      slug: p('slug'),
      fromVersion: p('fromVersion'),
      toVersion: p('toVersion'),
      startedAt: p('startedAt'),
      triggerKind: p('triggerKind'),
      triggerId: p('triggerId'),
      jobId: p('jobId'),
      safeUpdateId: p('safeUpdateId'),
      restorePoint: p('restorePoint'),
      rollbackOf: p('rollbackOf'),
      result: p('result'),
    })
    .prepare();
  // What an end writes, by the row's id or by its safe update's (drizzle's `set` takes placeholders only inside sql,
  // so finishedAt goes in as its stored epoch milliseconds).
  const ended = {
    result: sql`${p('result')}`,
    fromVersion: sql`coalesce(${p('fromVersion')}, ${updateHistory.fromVersion})`,
    toVersion: sql`coalesce(${p('toVersion')}, ${updateHistory.toVersion})`,
    reason: sql`${p('reason')}`,
    error: sql`${p('error')}`,
    finishedAt: sql`${p('finishedAt')}`,
  };
  const updateEnded = db
    .update(updateHistory)
    .set({ ...ended, safeUpdateId: sql`coalesce(${p('safeUpdateId')}, ${updateHistory.safeUpdateId})` })
    .where(eq(updateHistory.id, p('id')))
    .prepare();
  // A safe update asked for through the API ends in its job, found by its report's id (the row may predate a restart).
  const safeUpdateEnded = db
    .update(updateHistory)
    .set(ended)
    .where(and(eq(updateHistory.safeUpdateId, p('safeUpdateId')), eq(updateHistory.result, 'running')))
    .prepare();
  const parameters = (end: AttemptEnd) => ({ ...endValues(end), finishedAt: end.finishedAt.getTime() });

  return {
    insert(row: StartedRow): UpdateHistoryRow {
      const started = startedRow(row);
      insertStarted.run(started);
      return started;
    },
    finish: (id: string, end: AttemptEnd): void => void updateEnded.run({ ...parameters(end), id }),
    finishSafeUpdate: (safeUpdateId: string, end: AttemptEnd): boolean =>
      safeUpdateEnded.run({ ...parameters(end), safeUpdateId }).changes > 0,
  };
}
