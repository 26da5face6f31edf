import { eq, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { siteInventories } from './inventory.table.js';

export interface Inventory {
  pluginsJson: string;
  themesJson: string;
  syncedAt: Date;
}

export function createInventoryRepository({ db }: { db: Db }) {
  // Read by every GET /api/sites/{id}: prepared once.
  const inventoryOf = db
    .select()
    .from(siteInventories)
    .where(eq(siteInventories.siteId, sql.placeholder('siteId')))
    .prepare();
  return {
    read: (siteId: string): Inventory | undefined => inventoryOf.get({ siteId }),

    write(siteId: string, inventory: Inventory): void {
      db.insert(siteInventories)
        .values({ siteId, ...inventory })
        .onConflictDoUpdate({ target: siteInventories.siteId, set: inventory })
        .run();
    },
  };
}

export type InventoryRepository = ReturnType<typeof createInventoryRepository>;
