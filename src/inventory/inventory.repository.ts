import { eq, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import type { Plugin, Theme } from './inventory.schemas.js';
import { inventoryItems, siteInventories } from './inventory.table.js';

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

    /** The site's plugins and themes as read now: the blob the site's views show and the fleet's rows, together. */
    write(siteId: string, { plugins, themes, syncedAt }: { plugins: Plugin[]; themes: Theme[]; syncedAt: Date }): void {
      const inventory = { pluginsJson: JSON.stringify(plugins), themesJson: JSON.stringify(themes), syncedAt };
      const rows = [
        ...plugins.map((plugin) => ({
          siteId,
          type: 'plugin' as const,
          slug: plugin.slug,
          name: plugin.name,
          version: plugin.version,
          updateVersion: plugin.update?.version ?? null,
          active: plugin.status !== 'inactive',
        })),
        ...themes.map((theme) => ({
          siteId,
          type: 'theme' as const,
          slug: theme.slug,
          name: theme.name,
          version: theme.version,
          updateVersion: theme.update?.version ?? null,
          active: theme.status === 'active',
        })),
      ];
      db.transaction((tx) => {
        tx.insert(siteInventories)
          .values({ siteId, ...inventory })
          .onConflictDoUpdate({ target: siteInventories.siteId, set: inventory })
          .run();
        tx.delete(inventoryItems).where(eq(inventoryItems.siteId, siteId)).run();
        // Batches stay under SQLite's bound-parameter limit; a slug seen twice (two plugin files in one folder) keeps the first.
        for (let i = 0; i < rows.length; i += 100)
          tx.insert(inventoryItems)
            .values(rows.slice(i, i + 100))
            .onConflictDoNothing()
            .run();
      });
    },
  };
}

export type InventoryRepository = ReturnType<typeof createInventoryRepository>;
