import { and, desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { firstRow, tableFor } from '../db/dialect.js';
import type { StateDatabase, StateDb } from '../db/state-db.js';
import { rollbackSecrets as pgRollbackSecrets, safeUpdates as pgSafeUpdates } from './safe-updates.pg-table.js';
import {
  rollbackSecrets as sqliteRollbackSecrets,
  safeUpdates as sqliteSafeUpdates,
  type NewSafeUpdateRow,
  type SafeUpdateRow,
} from './safe-updates.table.js';

/** What a PostgreSQL process cannot do yet: a statement of the job runner's own transaction, SQLite's for now. */
const runnerOnly = (what: string) =>
  new Error(
    `${what} is a statement of the job runner's SQLite transaction: on PostgreSQL once the runner passes its transaction to its kinds' hooks (issue 34)`,
  );

/**
 * The safe updates and the sites' rollback secrets on either dialect (issue 34, docs/design/cluster-state.md):
 * one async body on drizzle's common query surface, every statement through the state database.
 *
 * A safe update's row written with its job (`insertWithJob`, an `OwnRow`) takes the job store's transaction on
 * PostgreSQL, and is synchronous inside the runner's on SQLite. So is a queued one's cancel: at once in the
 * runner's SQLite transaction, on the job store's `tx` in a cluster (`cancel`).
 */
export function createSafeUpdatesRepository(state: StateDatabase) {
  const safeUpdates = tableFor(state.dialect, { sqlite: sqliteSafeUpdates, postgres: pgSafeUpdates });
  const secrets = tableFor(state.dialect, { sqlite: sqliteRollbackSecrets, postgres: pgRollbackSecrets });
  const run = state.run.bind(state);
  const inRunner = state.sqliteDb && runnerStatements(state.sqliteDb);

  return {
    /**
     * A new safe update, written in the job runner's transaction with its job row (`jobs.submit(job, own)` or
     * `jobs.create(job, own)`, an `OwnRow`): on the transaction `tx` the job store gives it (PostgreSQL), else
     * synchronous, on SQLite.
     */
    insertWithJob(row: NewSafeUpdateRow, tx?: StateDb): SafeUpdateRow | Promise<SafeUpdateRow> {
      if (tx)
        return tx
          .insert(safeUpdates)
          .values(row)
          .returning()
          .then((rows) => rows[0]!);
      if (!inRunner) throw runnerOnly('a safe update written with its job');
      return inRunner.insert(row);
    },

    /**
     * Ends a queued safe update as cancelled (`failed`, reason `cancelled`, phase `done`), in the transaction that
     * cancels its job: on the job store's `tx` when given (a cluster), else at once in the job runner's synchronous
     * SQLite transaction. The row as written.
     */
    cancel(
      id: string,
      at: Date,
      message: string,
      tx?: StateDb,
    ): SafeUpdateRow | undefined | Promise<SafeUpdateRow | undefined> {
      const cancelled = { status: 'failed', reason: 'cancelled', message, phase: 'done', finishedAt: at } as const;
      if (tx) return tx.update(safeUpdates).set(cancelled).where(eq(safeUpdates.id, id)).returning().then(firstRow);
      if (!inRunner) throw runnerOnly('a safe update cancelled with its job');
      return inRunner.update(id, cancelled);
    },

    /** A row as given (tests: a safe update as an earlier daemon left it). */
    insert: (row: NewSafeUpdateRow): Promise<SafeUpdateRow> =>
      run((db) =>
        db
          .insert(safeUpdates)
          .values(row)
          .returning()
          .then((rows) => rows[0]!),
      ),

    /**
     * Its run starts (or resumes): `running`, since `at` unless it had started before (a run resumed after a
     * crash keeps its first start). The row as written; undefined when it is gone.
     */
    start: (id: string, at: Date): Promise<SafeUpdateRow | undefined> =>
      run((db) =>
        db
          .update(safeUpdates)
          .set({
            status: 'running',
            startedAt: sql`coalesce(${safeUpdates.startedAt}, ${sql.param(at, safeUpdates.startedAt)})`,
          })
          .where(eq(safeUpdates.id, id))
          .returning()
          .then(firstRow),
      ),

    update: (id: string, changes: Partial<NewSafeUpdateRow>): Promise<SafeUpdateRow | undefined> =>
      run((db) => db.update(safeUpdates).set(changes).where(eq(safeUpdates.id, id)).returning().then(firstRow)),

    find: (id: string): Promise<SafeUpdateRow | undefined> =>
      run((db) => db.select().from(safeUpdates).where(eq(safeUpdates.id, id)).then(firstRow)),

    findForSite: (siteId: string, id: string): Promise<SafeUpdateRow | undefined> =>
      run((db) =>
        db
          .select()
          .from(safeUpdates)
          .where(and(eq(safeUpdates.id, id), eq(safeUpdates.siteId, siteId)))
          .then(firstRow),
      ),

    /** A site's safe updates, newest first. */
    listForSite: (siteId: string, limit: number): Promise<SafeUpdateRow[]> =>
      run((db) =>
        db
          .select()
          .from(safeUpdates)
          .where(eq(safeUpdates.siteId, siteId))
          .orderBy(desc(safeUpdates.createdAt), desc(safeUpdates.id))
          .limit(limit),
      ),

    /** The site's sealed rollback secret, if it has one. */
    readSecret: async (siteId: string): Promise<string | undefined> =>
      (
        await run((db) =>
          db
            .select({ secretSealed: secrets.secretSealed })
            .from(secrets)
            .where(eq(secrets.siteId, siteId))
            .then(firstRow),
        )
      )?.secretSealed,

    /** The site's new sealed rollback secret, in place of the one it had. */
    writeSecret: async (siteId: string, secretSealed: string, at: Date): Promise<void> => {
      await run((db) =>
        db
          .insert(secrets)
          .values({ siteId, secretSealed, provisionedAt: at })
          .onConflictDoUpdate({ target: secrets.siteId, set: { secretSealed, provisionedAt: at } }),
      );
    },
  };
}

/**
 * The statements of the job runner's synchronous callbacks (`own`, `cancelQueued`, `recover.running`), made at
 * once on the SQLite connection (not through `state.run`: they run inside the runner's better-sqlite3
 * transaction, or in a recovery hook the runner calls without awaiting).
 */
function runnerStatements(db: Db) {
  const safeUpdates = sqliteSafeUpdates;
  return {
    insert: (row: NewSafeUpdateRow): SafeUpdateRow => db.insert(safeUpdates).values(row).returning().get(),
    update: (id: string, changes: Partial<NewSafeUpdateRow>): SafeUpdateRow | undefined =>
      db.update(safeUpdates).set(changes).where(eq(safeUpdates.id, id)).returning().get(),
  };
}

export type SafeUpdatesRepository = ReturnType<typeof createSafeUpdatesRepository>;
