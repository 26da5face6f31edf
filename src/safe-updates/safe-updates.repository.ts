import { and, desc, eq } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { rollbackSecrets, safeUpdates, type NewSafeUpdateRow, type SafeUpdateRow } from './safe-updates.table.js';

export function createSafeUpdatesRepository({ db }: { db: Db }) {
  return {
    insert: (row: NewSafeUpdateRow): SafeUpdateRow => db.insert(safeUpdates).values(row).returning().get(),
    update: (id: string, changes: Partial<NewSafeUpdateRow>): SafeUpdateRow | undefined =>
      db.update(safeUpdates).set(changes).where(eq(safeUpdates.id, id)).returning().get(),
    find: (id: string): SafeUpdateRow | undefined => db.select().from(safeUpdates).where(eq(safeUpdates.id, id)).get(),
    findForSite: (siteId: string, id: string): SafeUpdateRow | undefined =>
      db
        .select()
        .from(safeUpdates)
        .where(and(eq(safeUpdates.id, id), eq(safeUpdates.siteId, siteId)))
        .get(),
    listForSite: (siteId: string, limit: number): SafeUpdateRow[] =>
      db
        .select()
        .from(safeUpdates)
        .where(eq(safeUpdates.siteId, siteId))
        .orderBy(desc(safeUpdates.createdAt), desc(safeUpdates.id))
        .limit(limit)
        .all(),

    readSecret: (siteId: string): string | undefined =>
      db.select().from(rollbackSecrets).where(eq(rollbackSecrets.siteId, siteId)).get()?.secretSealed,
    writeSecret(siteId: string, secretSealed: string, at: Date): void {
      db.insert(rollbackSecrets)
        .values({ siteId, secretSealed, provisionedAt: at })
        .onConflictDoUpdate({ target: rollbackSecrets.siteId, set: { secretSealed, provisionedAt: at } })
        .run();
    },
  };
}

export type SafeUpdatesRepository = ReturnType<typeof createSafeUpdatesRepository>;
