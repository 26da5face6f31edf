import { and, desc, eq, gte, inArray, isNull, lt, ne, sql, type SQL } from 'drizzle-orm';
import { firstRow, forUpdate, rowsChanged, tableFor } from '../db/dialect.js';
import type { StateDatabase, StateDb } from '../db/state-db.js';
import type { SiteScope } from '../shared/actor.js';
import { pgSiteTags, siteTags as sqliteSiteTags, visibleSites } from '../sites/index.js';
import { updateHistory as pgUpdateHistory } from './update-history.pg-table.js';
import {
  endValues,
  preparedWrites,
  startedRow,
  type AttemptEnd,
  type StartedRow,
} from './update-history.statements.js';
import {
  updateHistory as sqliteUpdateHistory,
  type UpdateHistoryRow,
  type TriggerKind,
  type UpdateItemType,
  type UpdateResult,
} from './update-history.table.js';

export type { AttemptEnd, StartedRow } from './update-history.statements.js';

export interface HistoryFilter {
  siteId?: string;
  /** Only sites carrying every one of these tags. */
  tags?: string[];
  type?: UpdateItemType;
  slug?: string;
  result?: UpdateResult;
  /** Who asked: the kind (`user`, `policy`, `request`), and which one (a user, policy or token id). */
  triggerKind?: TriggerKind;
  triggerId?: string;
  since?: Date;
  /** Attempts started before this time. */
  until?: Date;
  /** Newest first: rows before this id. */
  before?: string;
  limit: number;
  /** Only the entries of the sites a request may see (issue 33; absent: every site's). */
  scope?: SiteScope;
}

/** A rollback's row as it starts: it names the attempt it rolls back. */
type StartedRollback = StartedRow & { rollbackOf: string };

/**
 * The update history on either dialect (issue 34, docs/design/cluster-state.md): one async body on drizzle's
 * common query surface, every statement through the state database. Every attempt writes a row as it starts and
 * again as it ends: on SQLite those writes keep their statements prepared once (update-history.statements.ts),
 * run inside `state.run`. A safe update's end is written only while its row runs, and a rollback starts only
 * while no other rollback of its entry is running or done (`startRollback`).
 *
 * `within` is the same writes made inside a transaction the caller holds (write-batch.ts `HeldWrite`): a bulk site
 * update's write batch, whose attempts' starts and ends commit with the job's own writes. Given the transaction's
 * `tx`, they are the common body on it; without one, the prepared SQLite statements, at once, inside the
 * better-sqlite3 transaction of the daemon's batch.
 */
export function createUpdateHistoryRepository(state: StateDatabase) {
  const updateHistory = tableFor(state.dialect, { sqlite: sqliteUpdateHistory, postgres: pgUpdateHistory });
  const siteTags = tableFor(state.dialect, { sqlite: sqliteSiteTags, postgres: pgSiteTags });
  const fast = state.sqliteDb && preparedWrites(state.sqliteDb);
  const run = state.run.bind(state);

  /** What an end writes on the common path: the versions and the safe update kept as started where it names none. */
  const ended = (end: AttemptEnd) => {
    const values = endValues(end);
    return {
      result: values.result,
      fromVersion: sql`coalesce(${values.fromVersion}, ${updateHistory.fromVersion})`,
      toVersion: sql`coalesce(${values.toVersion}, ${updateHistory.toVersion})`,
      reason: values.reason,
      error: values.error,
      finishedAt: values.finishedAt,
    };
  };
  /** The rollbacks of an attempt that did not fail (running or done). */
  const rollbacksOf = (id: string) => and(eq(updateHistory.rollbackOf, id), ne(updateHistory.result, 'failed'));

  /** An attempt as it starts (not finished yet). */
  async function insert(row: StartedRow, tx?: StateDb): Promise<UpdateHistoryRow> {
    if (fast && !tx) return run(() => fast.insert(row));
    const started = startedRow(row);
    await run((db) => db.insert(updateHistory).values(started), tx);
    return started;
  }

  async function finish(id: string, end: AttemptEnd, tx?: StateDb): Promise<void> {
    if (fast && !tx) return run(() => fast.finish(id, end));
    const safeUpdateId = endValues(end).safeUpdateId;
    await run(
      (db) =>
        db
          .update(updateHistory)
          .set({ ...ended(end), safeUpdateId: sql`coalesce(${safeUpdateId}, ${updateHistory.safeUpdateId})` })
          .where(eq(updateHistory.id, id)),
      tx,
    );
  }

  /** Ends the running attempt of a safe update (none: not one asked for through the API); whether there was one. */
  async function finishSafeUpdate(safeUpdateId: string, end: AttemptEnd, tx?: StateDb): Promise<boolean> {
    if (fast && !tx) return run(() => fast.finishSafeUpdate(safeUpdateId, end));
    const result = await run(
      (db) =>
        db
          .update(updateHistory)
          .set(ended(end))
          .where(and(eq(updateHistory.safeUpdateId, safeUpdateId), eq(updateHistory.result, 'running'))),
      tx,
    );
    return rowsChanged(result) > 0;
  }

  /** A held write's SQLite statement, made at once; there is none on PostgreSQL, where a held write is given its `tx`. */
  const atOnce = () => {
    if (!fast) throw new Error('an update attempt held in a write batch on PostgreSQL is written on its transaction');
    return fast;
  };

  return {
    insert: (row: StartedRow): Promise<UpdateHistoryRow> => insert(row),

    /**
     * A rollback of the attempt `row.rollbackOf` as it starts, unless one of it is running or done already
     * (`rolledBackBy`, then nothing is written): two requests at once start one. The attempt's row is read and
     * locked first (`for update` on PostgreSQL: another process's start waits for this one, then finds it);
     * undefined, and nothing written, when it is gone.
     */
    startRollback: (
      row: StartedRollback,
    ): Promise<{ started: UpdateHistoryRow } | { rolledBackBy: UpdateHistoryRow } | undefined> =>
      state.transaction(async (tx) => {
        const [entry] = await forUpdate(
          state.dialect,
          tx.select({ id: updateHistory.id }).from(updateHistory).where(eq(updateHistory.id, row.rollbackOf)),
        );
        if (!entry) return undefined;
        const [done] = await tx.select().from(updateHistory).where(rollbacksOf(row.rollbackOf)).limit(1);
        if (done) return { rolledBackBy: done };
        const started = startedRow(row);
        await tx.insert(updateHistory).values(started);
        return { started };
      }),

    find: (siteId: string, id: string): Promise<UpdateHistoryRow | undefined> =>
      run((db) =>
        db
          .select()
          .from(updateHistory)
          .where(and(eq(updateHistory.siteId, siteId), eq(updateHistory.id, id)))
          .then(firstRow),
      ),
    /** The rollbacks of an attempt that did not fail (running or done): it is rolled back, or being. */
    rollbackOf: (id: string): Promise<UpdateHistoryRow | undefined> =>
      run((db) => db.select().from(updateHistory).where(rollbacksOf(id)).limit(1).then(firstRow)),

    finish: (id: string, end: AttemptEnd): Promise<void> => finish(id, end),
    /**
     * At start, before any work: every attempt still `running` that no queued safe update will end
     * was cut short by the last process (its site may or may not have changed); ended `failed` with
     * `reason`. How many.
     */
    endAbandoned: async (end: { reason: string; error: string; finishedAt: Date }): Promise<number> =>
      rowsChanged(
        await run((db) =>
          db
            .update(updateHistory)
            .set({ result: 'failed', reason: end.reason, error: end.error, finishedAt: end.finishedAt })
            .where(and(eq(updateHistory.result, 'running'), isNull(updateHistory.safeUpdateId))),
        ),
      ),
    /** Ends the running attempt of a safe update (none: not one asked for through the API); whether there was one. */
    finishSafeUpdate: (safeUpdateId: string, end: AttemptEnd & { fromVersion: string | null }): Promise<boolean> =>
      finishSafeUpdate(safeUpdateId, end),

    /** Newest first (ids are time-ordered). */
    list({
      siteId,
      tags = [],
      type,
      slug,
      result,
      triggerKind,
      triggerId,
      since,
      until,
      before,
      limit,
      scope,
    }: HistoryFilter): Promise<UpdateHistoryRow[]> {
      const unique = [...new Set(tags)];
      return run((db) => {
        const tagged =
          unique.length === 0
            ? undefined
            : inArray(
                updateHistory.siteId,
                db
                  .select({ siteId: siteTags.siteId })
                  .from(siteTags)
                  .where(inArray(siteTags.tag, unique))
                  .groupBy(siteTags.siteId)
                  .having(sql`count(distinct ${siteTags.tag}) = ${unique.length}`),
              );
        const conditions: (SQL | undefined)[] = [
          siteId === undefined ? undefined : eq(updateHistory.siteId, siteId),
          tagged,
          scope === undefined ? undefined : visibleSites(scope, updateHistory.siteId),
          type === undefined ? undefined : eq(updateHistory.type, type),
          slug === undefined ? undefined : eq(updateHistory.slug, slug),
          result === undefined ? undefined : eq(updateHistory.result, result),
          triggerKind === undefined ? undefined : eq(updateHistory.triggerKind, triggerKind),
          triggerId === undefined ? undefined : eq(updateHistory.triggerId, triggerId),
          since === undefined ? undefined : gte(updateHistory.startedAt, since),
          until === undefined ? undefined : lt(updateHistory.startedAt, until),
          before === undefined ? undefined : lt(updateHistory.id, before),
        ];
        return db
          .select()
          .from(updateHistory)
          .where(and(...conditions))
          .orderBy(desc(updateHistory.id))
          .limit(limit);
      });
    },

    ofJob: (jobId: string): Promise<UpdateHistoryRow[]> =>
      run((db) => db.select().from(updateHistory).where(eq(updateHistory.jobId, jobId)).orderBy(updateHistory.id)),

    /** The starts and ends held in a write batch (above): on its `tx` when given, else at once on SQLite. */
    within: {
      insert: (row: StartedRow, tx?: StateDb): UpdateHistoryRow | Promise<UpdateHistoryRow> =>
        tx ? insert(row, tx) : atOnce().insert(row),
      finish: (id: string, end: AttemptEnd, tx?: StateDb): void | Promise<void> =>
        tx ? finish(id, end, tx) : atOnce().finish(id, end),
      finishSafeUpdate: (safeUpdateId: string, end: AttemptEnd, tx?: StateDb): boolean | Promise<boolean> =>
        tx ? finishSafeUpdate(safeUpdateId, end, tx) : atOnce().finishSafeUpdate(safeUpdateId, end),
    },
  };
}

export type UpdateHistoryRepository = ReturnType<typeof createUpdateHistoryRepository>;
