import type Database from 'better-sqlite3';
import { and, asc, count, eq, isNull, or, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { apiTokens, type ApiTokenRow } from './tokens.table.js';

export function createTokensRepository({ db }: { db: Db }) {
  // drizzle's documented handle on the driver; one prepared pragma, read on every request.
  const dataVersion = (db as Db & { $client: Database.Database }).$client.prepare('PRAGMA data_version').pluck();
  const activeByHash = db
    .select()
    .from(apiTokens)
    .where(and(eq(apiTokens.tokenHash, sql.placeholder('tokenHash')), isNull(apiTokens.revokedAt)))
    .prepare();
  return {
    insert(row: typeof apiTokens.$inferInsert): void {
      db.insert(apiTokens).values(row).run();
    },
    findActiveByHash(tokenHash: string): ApiTokenRow | undefined {
      return activeByHash.get({ tokenHash });
    },
    list(): ApiTokenRow[] {
      return db.select().from(apiTokens).orderBy(asc(apiTokens.id)).all();
    },
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

export type TokensRepository = ReturnType<typeof createTokensRepository>;
