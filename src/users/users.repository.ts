import { and, asc, count, eq, gt, lte, ne } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { sessions, users, type SessionRow, type UserRow } from './users.table.js';

export function createUsersRepository({ db }: { db: Db }) {
  return {
    insertUser(row: typeof users.$inferInsert): void {
      db.insert(users).values(row).run();
    },
    findByUsername: (username: string): UserRow | undefined =>
      db.select().from(users).where(eq(users.username, username)).get(),
    findById: (id: string): UserRow | undefined => db.select().from(users).where(eq(users.id, id)).get(),
    listUsers: (): UserRow[] => db.select().from(users).orderBy(asc(users.id)).all(),
    countUsers: (): number => db.select({ n: count() }).from(users).get()?.n ?? 0,
    setRole(id: string, role: UserRow['role']): void {
      db.update(users).set({ role }).where(eq(users.id, id)).run();
    },
    setScopeTags(id: string, scopeTags: string[] | null): void {
      db.update(users).set({ scopeTags }).where(eq(users.id, id)).run();
    },
    countOwners: (): number => db.select({ n: count() }).from(users).where(eq(users.role, 'owner')).get()?.n ?? 0,
    /** Deletes the user; their sessions go with them (foreign key). */
    deleteUser(id: string): void {
      db.delete(users).where(eq(users.id, id)).run();
    },
    setPassword(id: string, passwordHash: string, at: Date): void {
      db.update(users).set({ passwordHash, passwordChangedAt: at }).where(eq(users.id, id)).run();
    },
    markSignedIn(id: string, at: Date): void {
      db.update(users).set({ lastSignedInAt: at }).where(eq(users.id, id)).run();
    },
    insertSession(row: SessionRow): void {
      db.insert(sessions).values(row).run();
    },
    /** The live session with that token hash and its user. */
    findSession(tokenHash: string, now: Date): { session: SessionRow; user: UserRow } | undefined {
      return db
        .select({ session: sessions, user: users })
        .from(sessions)
        .innerJoin(users, eq(users.id, sessions.userId))
        .where(and(eq(sessions.tokenHash, tokenHash), gt(sessions.expiresAt, now)))
        .get();
    },
    touchSession(id: string, lastSeenAt: Date, expiresAt: Date): void {
      db.update(sessions).set({ lastSeenAt, expiresAt }).where(eq(sessions.id, id)).run();
    },
    deleteSession(id: string): void {
      db.delete(sessions).where(eq(sessions.id, id)).run();
    },
    /** Whether the session still exists and has not expired (read only: its idle time is not extended). */
    isSessionLive: (id: string, now: Date): boolean =>
      db
        .select({ id: sessions.id })
        .from(sessions)
        .where(and(eq(sessions.id, id), gt(sessions.expiresAt, now)))
        .get() !== undefined,
    sessionIdsOf: (userId: string): string[] =>
      db
        .select({ id: sessions.id })
        .from(sessions)
        .where(eq(sessions.userId, userId))
        .all()
        .map((row) => row.id),
    deleteSessionsOf(userId: string): void {
      db.delete(sessions).where(eq(sessions.userId, userId)).run();
    },
    /** Ends every session of the user but one (the one changing its own password). */
    deleteOtherSessionsOf(userId: string, keep: string): string[] {
      const ended = db
        .select({ id: sessions.id })
        .from(sessions)
        .where(and(eq(sessions.userId, userId), ne(sessions.id, keep)))
        .all()
        .map((row) => row.id);
      db.delete(sessions)
        .where(and(eq(sessions.userId, userId), ne(sessions.id, keep)))
        .run();
      return ended;
    },
    deleteExpiredSessions(now: Date): number {
      return db.delete(sessions).where(lte(sessions.expiresAt, now)).run().changes;
    },
  };
}

export type UsersRepository = ReturnType<typeof createUsersRepository>;
