import { and, asc, count, eq, isNull, or } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { apiTokens, type ApiTokenRow } from './tokens.table.js';

export function createTokensRepository({ db }: { db: Db }) {
  return {
    insert(row: typeof apiTokens.$inferInsert): void {
      db.insert(apiTokens).values(row).run();
    },
    findActiveByHash(tokenHash: string): ApiTokenRow | undefined {
      return db.select().from(apiTokens).where(and(eq(apiTokens.tokenHash, tokenHash), isNull(apiTokens.revokedAt))).get();
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
  };
}

export type TokensRepository = ReturnType<typeof createTokensRepository>;
