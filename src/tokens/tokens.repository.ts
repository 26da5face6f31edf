import type Database from 'better-sqlite3';
import { and, asc, count, eq, isNull, or, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import type { Role } from '../shared/actor.js';
import { apiTokens, type ApiTokenRow } from './tokens.table.js';

/** An active token and the current role of its user: null when the token has no user, `missing` when its user is gone. */
export interface ActiveToken {
  token: ApiTokenRow;
  userRole: Role | 'missing' | null;
  /** The user's scope tags as stored (a JSON array; null: every site). */
  userScopeTags: string | null;
}

// The users table is the users feature's; tokens read one column of it by name (no import: the two
// features are of one tier). A user deleted or renamed away leaves `missing`, which is refused.
const userRole = sql<
  Role | 'missing' | null
>`case when ${apiTokens.userId} is null then null else coalesce((select u.role from users u where u.id = ${apiTokens.userId}), 'missing') end`;

const userScopeTags = sql<string | null>`(select u.scope_tags from users u where u.id = ${apiTokens.userId})`;

export function createTokensRepository({ db }: { db: Db }) {
  // drizzle's documented handle on the driver; one prepared pragma, read on every request.
  const dataVersion = (db as Db & { $client: Database.Database }).$client.prepare('PRAGMA data_version').pluck();
  const activeByHash = db
    .select({ token: apiTokens, userRole, userScopeTags })
    .from(apiTokens)
    .where(and(eq(apiTokens.tokenHash, sql.placeholder('tokenHash')), isNull(apiTokens.revokedAt)))
    .prepare();
  return {
    insert(row: typeof apiTokens.$inferInsert): void {
      db.insert(apiTokens).values(row).run();
    },
    findActiveByHash(tokenHash: string): ActiveToken | undefined {
      return activeByHash.get({ tokenHash });
    },
    /** Every token, or those of one user (`null`: the operator tokens). */
    list(userId?: string | null): ApiTokenRow[] {
      const query = db.select().from(apiTokens);
      return (
        userId === undefined
          ? query
          : query.where(userId === null ? isNull(apiTokens.userId) : eq(apiTokens.userId, userId))
      )
        .orderBy(asc(apiTokens.id))
        .all();
    },
    /** The current role of a user (the users feature's table, read by name), or undefined when there is none. */
    roleOfUser: (userId: string): Role | undefined =>
      db.get<{ role: Role } | undefined>(sql`select role from users where id = ${userId}`)?.role,
    /** A user's current role and scope tags (parsed; null: every site), or undefined when there is no such user. */
    userOf(userId: string): { role: Role; scopeTags: string[] | null } | undefined {
      const row = db.get<{ role: Role; scope_tags: string | null } | undefined>(
        sql`select role, scope_tags from users where id = ${userId}`,
      );
      return row && { role: row.role, scopeTags: parseTags(row.scope_tags) };
    },
    findById: (id: string): ApiTokenRow | undefined => db.select().from(apiTokens).where(eq(apiTokens.id, id)).get(),
    countActive(): number {
      return db.select({ n: count() }).from(apiTokens).where(isNull(apiTokens.revokedAt)).get()?.n ?? 0;
    },
    findByIdOrName(idOrName: string): ApiTokenRow[] {
      return db
        .select()
        .from(apiTokens)
        .where(and(isNull(apiTokens.revokedAt), or(eq(apiTokens.id, idOrName), eq(apiTokens.name, idOrName))))
        .all();
    },
    markUsed(id: string, at: Date): void {
      db.update(apiTokens).set({ lastUsedAt: at }).where(eq(apiTokens.id, id)).run();
    },
    revoke(id: string, at: Date): void {
      db.update(apiTokens).set({ revokedAt: at }).where(eq(apiTokens.id, id)).run();
    },
    /** Changes whenever another connection (the CLI revoking a token) commits to the database. */
    dataVersion: (): number => dataVersion.get() as number,
  };
}

/** Stored scope tags (a JSON array of strings) as a list; null, or anything else, as no limit. */
export function parseTags(stored: string | null): string[] | null {
  if (stored === null) return null;
  try {
    const value: unknown = JSON.parse(stored);
    if (Array.isArray(value) && value.every((tag) => typeof tag === 'string')) return value as string[];
  } catch {
    // not JSON: refused below
  }
  // A row the daemon did not write: fail closed (no site) rather than open.
  return [];
}

export type TokensRepository = ReturnType<typeof createTokensRepository>;
