import { and, asc, count, eq, gt, lte, ne, sql } from 'drizzle-orm';
import { firstRow, forUpdate, rowsChanged, tableFor } from '../db/dialect.js';
import type { StateDatabase, StateDb } from '../db/state-db.js';
import * as pg from './users.pg-table.js';
import * as sqlite from './users.table.js';
import type { SessionRow, UserRow } from './users.table.js';

/**
 * A change that must leave an owner (users.service.ts's `last-owner`): done, refused because the user is
 * the only owner, or the user is gone.
 */
export type OwnerKeptOutcome = 'done' | 'last-owner' | 'missing';

/**
 * Users and their sessions on either dialect (issue 34, docs/design/cluster-state.md): one body on
 * drizzle's common query surface, every statement through the state database.
 */
export function createUsersRepository(state: StateDatabase) {
  const users = tableFor(state.dialect, { sqlite: sqlite.users, postgres: pg.users });
  const sessions = tableFor(state.dialect, { sqlite: sqlite.sessions, postgres: pg.sessions });
  const ids = (rows: { id: string }[]) => rows.map((row) => row.id);
  // Every dashboard request reads its session: on SQLite a statement prepared once (0.02 ms against 0.4 ms built
  // per call, measured in session 32); PostgreSQL builds it per call.
  const sessionByHash = state.sqliteDb
    ?.select({ session: sqlite.sessions, user: sqlite.users })
    .from(sqlite.sessions)
    .innerJoin(sqlite.users, eq(sqlite.users.id, sqlite.sessions.userId))
    .where(
      and(
        eq(sqlite.sessions.tokenHash, sql.placeholder('tokenHash')),
        gt(sqlite.sessions.expiresAt, sql.placeholder('now')),
      ),
    )
    .prepare();

  /**
   * `change` on `tx` (whether it found the user) unless the user is the only owner, decided on the owners
   * read and locked first: on PostgreSQL another process's change of an owner waits for this one, then
   * reads them again, so two owners demoting each other at once leave one.
   */
  const keepingAnOwner = (id: string, change: (tx: StateDb) => Promise<boolean>): Promise<OwnerKeptOutcome> =>
    state.transaction(async (tx) => {
      const owners = ids(
        await forUpdate(state.dialect, tx.select({ id: users.id }).from(users).where(eq(users.role, 'owner'))),
      );
      if (owners.length === 1 && owners[0] === id) return 'last-owner';
      return (await change(tx)) ? 'done' : 'missing';
    });

  return {
    insertUser: (row: typeof sqlite.users.$inferInsert): Promise<void> =>
      state.run(async (db) => {
        await db.insert(users).values(row);
      }),
    findByUsername: (username: string): Promise<UserRow | undefined> =>
      state.run((db) => db.select().from(users).where(eq(users.username, username)).then(firstRow)),
    findById: (id: string): Promise<UserRow | undefined> =>
      state.run((db) => db.select().from(users).where(eq(users.id, id)).then(firstRow)),
    listUsers: (): Promise<UserRow[]> => state.run((db) => db.select().from(users).orderBy(asc(users.id))),
    countUsers: (): Promise<number> =>
      state.run((db) =>
        db
          .select({ n: count() })
          .from(users)
          .then((rows) => rows[0]?.n ?? 0),
      ),
    /** Gives the user the role, unless they are the only owner and the role is another. */
    setRole: async (id: string, role: UserRow['role']): Promise<OwnerKeptOutcome> => {
      const write = async (db: StateDb) =>
        rowsChanged(await db.update(users).set({ role }).where(eq(users.id, id))) === 1;
      if (role === 'owner') return (await state.run(write)) ? 'done' : 'missing';
      return keepingAnOwner(id, write);
    },
    setScopeTags: (id: string, scopeTags: string[] | null): Promise<void> =>
      state.run(async (db) => {
        await db.update(users).set({ scopeTags }).where(eq(users.id, id));
      }),
    /**
     * Deletes the user, unless they are the only owner; their sessions go with them (foreign key), and
     * their ids are answered with the outcome.
     */
    deleteUser: async (id: string): Promise<{ outcome: OwnerKeptOutcome; sessionIds: string[] }> => {
      let sessionIds: string[] = [];
      const outcome = await keepingAnOwner(id, async (tx) => {
        sessionIds = ids(await tx.select({ id: sessions.id }).from(sessions).where(eq(sessions.userId, id)));
        return rowsChanged(await tx.delete(users).where(eq(users.id, id))) === 1;
      });
      return { outcome, sessionIds: outcome === 'done' ? sessionIds : [] };
    },
    setPassword: (id: string, passwordHash: string, at: Date): Promise<void> =>
      state.run(async (db) => {
        await db.update(users).set({ passwordHash, passwordChangedAt: at }).where(eq(users.id, id));
      }),
    markSignedIn: (id: string, at: Date): Promise<void> =>
      state.run(async (db) => {
        await db.update(users).set({ lastSignedInAt: at }).where(eq(users.id, id));
      }),
    insertSession: (row: SessionRow): Promise<void> =>
      state.run(async (db) => {
        await db.insert(sessions).values(row);
      }),
    /** The live session with that token hash and its user (every dashboard request asks). */
    findSession: (tokenHash: string, now: Date): Promise<{ session: SessionRow; user: UserRow } | undefined> =>
      state.run((db) =>
        sessionByHash
          ? sessionByHash.get({ tokenHash, now: now.getTime() })
          : db
              .select({ session: sessions, user: users })
              .from(sessions)
              .innerJoin(users, eq(users.id, sessions.userId))
              .where(and(eq(sessions.tokenHash, tokenHash), gt(sessions.expiresAt, now)))
              .then(firstRow),
      ),
    touchSession: (id: string, lastSeenAt: Date, expiresAt: Date): Promise<void> =>
      state.run(async (db) => {
        await db.update(sessions).set({ lastSeenAt, expiresAt }).where(eq(sessions.id, id));
      }),
    deleteSession: (id: string): Promise<void> =>
      state.run(async (db) => {
        await db.delete(sessions).where(eq(sessions.id, id));
      }),
    /** Whether the session still exists and has not expired (read only: its idle time is not extended). */
    isSessionLive: (id: string, now: Date): Promise<boolean> =>
      state.run((db) =>
        db
          .select({ id: sessions.id })
          .from(sessions)
          .where(and(eq(sessions.id, id), gt(sessions.expiresAt, now)))
          .then((rows) => rows.length > 0),
      ),
    /** Ends every session of the user; answers their ids. */
    deleteSessionsOf: (userId: string): Promise<string[]> =>
      state.run((db) =>
        db.delete(sessions).where(eq(sessions.userId, userId)).returning({ id: sessions.id }).then(ids),
      ),
    /** Ends every session of the user but one (the one changing its own password); answers their ids. */
    deleteOtherSessionsOf: (userId: string, keep: string): Promise<string[]> =>
      state.run((db) =>
        db
          .delete(sessions)
          .where(and(eq(sessions.userId, userId), ne(sessions.id, keep)))
          .returning({ id: sessions.id })
          .then(ids),
      ),
    deleteExpiredSessions: (now: Date): Promise<number> =>
      state.run(async (db) => rowsChanged(await db.delete(sessions).where(lte(sessions.expiresAt, now)))),
  };
}

export type UsersRepository = ReturnType<typeof createUsersRepository>;
