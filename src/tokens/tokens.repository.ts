import { and, asc, count, eq, isNull, or, sql } from 'drizzle-orm';
import { firstRow, rowsOf, tableFor } from '../db/dialect.js';
import type { StateDatabase, StateDb } from '../db/state-db.js';
import type { Role } from '../shared/actor.js';
import { apiTokens as pgApiTokens } from './tokens.pg-table.js';
import { apiTokens as sqliteApiTokens, type ApiTokenRow } from './tokens.table.js';

/** An active token and the current role of its user: null when the token has no user, `missing` when its user is gone. */
export interface ActiveToken {
  token: ApiTokenRow;
  userRole: Role | 'missing' | null;
  /** The user's scope tags as stored (a JSON array; null: every site). */
  userScopeTags: string | null;
}

type ApiTokensTable = typeof pgApiTokens | typeof sqliteApiTokens;

/*
 * The users table is the users feature's; tokens read two of its columns by name (no import: the two
 * features are of one tier). A user deleted or renamed away leaves `missing`, which is refused. The
 * scope tags are read as JSON text on both dialects (PostgreSQL's jsonb cast to text, SQLite's text as it is).
 */
const userRoleOf = (tokens: ApiTokensTable) =>
  sql<
    Role | 'missing' | null
  >`case when ${tokens.userId} is null then null else coalesce((select u.role from users u where u.id = ${tokens.userId}), 'missing') end`;

const userScopeTagsOf = (tokens: ApiTokensTable) =>
  sql<string | null>`(select cast(u.scope_tags as text) from users u where u.id = ${tokens.userId})`;

/**
 * The `api_tokens` rows on either dialect (issue 34, docs/design/cluster-state.md), every statement
 * through the state database. Every API request authenticates through `findActiveByHash` (when the
 * service has not remembered the token) and `dataVersion`: on SQLite both stay statements prepared
 * once, run inside `state.run`.
 */
export function createTokensRepository(state: StateDatabase) {
  const apiTokens = tableFor(state.dialect, { sqlite: sqliteApiTokens, postgres: pgApiTokens });
  const activeByHash = (db: StateDb, tokenHash: string) =>
    db
      .select({ token: apiTokens, userRole: userRoleOf(apiTokens), userScopeTags: userScopeTagsOf(apiTokens) })
      .from(apiTokens)
      .where(and(eq(apiTokens.tokenHash, tokenHash), isNull(apiTokens.revokedAt)));

  // SQLite: the lookup and the pragma prepared once (the connection's drizzle database, its own table).
  const { sqlite, sqliteDb } = state;
  const prepared = sqlite &&
    sqliteDb && {
      dataVersion: sqlite.prepare('PRAGMA data_version').pluck(),
      activeByHash: sqliteDb
        .select({
          token: sqliteApiTokens,
          userRole: userRoleOf(sqliteApiTokens),
          userScopeTags: userScopeTagsOf(sqliteApiTokens),
        })
        .from(sqliteApiTokens)
        .where(and(eq(sqliteApiTokens.tokenHash, sql.placeholder('tokenHash')), isNull(sqliteApiTokens.revokedAt)))
        .prepare(),
    };

  return {
    insert: async (row: typeof apiTokens.$inferInsert): Promise<void> => {
      await state.run((db) => db.insert(apiTokens).values(row));
    },

    findActiveByHash: (tokenHash: string): Promise<ActiveToken | undefined> =>
      prepared
        ? state.run(() => prepared.activeByHash.get({ tokenHash }))
        : state.run((db) => activeByHash(db, tokenHash).then(firstRow)),

    /** Every token, or those of one user (`null`: the operator tokens). */
    list: (userId?: string | null): Promise<ApiTokenRow[]> =>
      state.run((db) => {
        const query = db.select().from(apiTokens);
        return (
          userId === undefined
            ? query
            : query.where(userId === null ? isNull(apiTokens.userId) : eq(apiTokens.userId, userId))
        ).orderBy(asc(apiTokens.id));
      }),

    /** A user's current role and scope tags (parsed; null: every site), or undefined when there is no such user. */
    userOf: async (userId: string): Promise<{ role: Role; scopeTags: string[] | null } | undefined> => {
      const [row] = await state.run((db) =>
        rowsOf<{ role: Role; scope_tags: string | null }>(
          state,
          db,
          sql`select role, cast(scope_tags as text) as scope_tags from users where id = ${userId}`,
        ),
      );
      return row && { role: row.role, scopeTags: parseTags(row.scope_tags) };
    },

    findById: (id: string): Promise<ApiTokenRow | undefined> =>
      state.run((db) => db.select().from(apiTokens).where(eq(apiTokens.id, id)).then(firstRow)),

    countActive: (): Promise<number> =>
      state.run((db) =>
        db
          .select({ n: count() })
          .from(apiTokens)
          .where(isNull(apiTokens.revokedAt))
          .then((rows) => rows[0]?.n ?? 0),
      ),

    /** The active tokens whose id or name is `idOrName`. */
    findByIdOrName: (idOrName: string): Promise<ApiTokenRow[]> =>
      state.run((db) =>
        db
          .select()
          .from(apiTokens)
          .where(and(isNull(apiTokens.revokedAt), or(eq(apiTokens.id, idOrName), eq(apiTokens.name, idOrName)))),
      ),

    markUsed: async (id: string, at: Date): Promise<void> => {
      await state.run((db) => db.update(apiTokens).set({ lastUsedAt: at }).where(eq(apiTokens.id, id)));
    },

    /** Revokes the token `id` while it is active, and answers it as written; undefined when it is not (revoked meanwhile, gone). */
    revoke: (id: string, at: Date): Promise<ApiTokenRow | undefined> =>
      state.run((db) =>
        db
          .update(apiTokens)
          .set({ revokedAt: at })
          .where(and(eq(apiTokens.id, id), isNull(apiTokens.revokedAt)))
          .returning()
          .then(firstRow),
      ),

    /**
     * Changes whenever another connection (the CLI revoking a token) commits to the database: SQLite's
     * `data_version`. Undefined on PostgreSQL, where other processes' writes cannot be told as cheaply:
     * nothing read there may be remembered across requests.
     */
    dataVersion: (): Promise<number | undefined> =>
      prepared ? state.run(() => prepared.dataVersion.get() as number) : Promise.resolve(undefined),
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
