import type { Db } from '../db/database.js';
import { createInstalledQueries } from './fleet.installed.js';
import { createPendingQueries } from './fleet.pending.js';
import { createFleetRows } from './fleet.rows.js';

export { ITEM_KEY, type ItemType } from './fleet.rows.js';

/**
 * The fleet's questions answered from the inventory rows the sync keeps (never from the sites):
 * every query walks an index of inventory_items and reads one page. One object composed of its
 * parts: pending updates (fleet.pending.ts) and what is installed (fleet.installed.ts), over the
 * rows a query reads (fleet.rows.ts).
 */
export function createFleetRepository({ db }: { db: Db }) {
  const rows = createFleetRows(db);
  return { ...createPendingQueries({ db, rows }), ...createInstalledQueries({ db, rows }) };
}

export type FleetRepository = ReturnType<typeof createFleetRepository>;
