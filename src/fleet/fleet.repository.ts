import type { StateDatabase } from '../db/state-db.js';
import { createInstalledQueries } from './fleet.installed.js';
import { createPendingQueries } from './fleet.pending.js';
import { createFleetRows, fleetTablesOf } from './fleet.rows.js';

export { ITEM_KEY, type ItemType } from './fleet.rows.js';

/**
 * The fleet's questions answered from the inventory rows the sync keeps (never from the sites):
 * every query walks an index of inventory_items and reads one page. One object composed of its
 * parts: pending updates (fleet.pending.ts) and what is installed (fleet.installed.ts), over the
 * rows a query reads (fleet.rows.ts). One async body on either dialect (issue 34,
 * docs/design/cluster-state.md), every statement through the state database; reads only, so no
 * transaction.
 */
export function createFleetRepository(state: StateDatabase) {
  const tables = fleetTablesOf(state);
  const rows = createFleetRows(tables);
  return { ...createPendingQueries({ state, tables, rows }), ...createInstalledQueries({ state, tables, rows }) };
}

export type FleetRepository = ReturnType<typeof createFleetRepository>;
