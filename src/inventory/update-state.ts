import { and, eq, inArray, isNotNull } from 'drizzle-orm';
import { tableFor } from '../db/dialect.js';
import type { StateDatabase } from '../db/state-db.js';
import { pgSites, sites as sqliteSites } from '../sites/index.js';
import * as pg from './inventory.pg-table.js';
import * as sqlite from './inventory.table.js';

/** What the inventory knows of one site's pending updates, as update policies read it. */
export interface SiteUpdateState {
  siteId: string;
  /** The site's own zone (IANA or `UTC±HH:MM`); null when the site never said. */
  timeZone: string | null;
  items: {
    type: 'plugin' | 'theme';
    slug: string;
    updateVersion: string | null;
    /** When this site was first offered `updateVersion`. */
    firstSeenAt: Date | null;
  }[];
  core: { version: string | null; offers: { version: string; firstSeenAt: Date }[] };
  /** The oldest pending language pack's first sighting; null when none is pending. */
  translationsFirstSeenAt: Date | null;
}

const CHUNK = 500;

/**
 * Reads pending updates with their first sightings for many sites, a few queries per 500 sites, on either
 * dialect (issue 34, docs/design/cluster-state.md).
 */
export function createUpdateStateReader(state: StateDatabase) {
  const sites = tableFor(state.dialect, { sqlite: sqliteSites, postgres: pgSites });
  const inventoryItems = tableFor(state.dialect, { sqlite: sqlite.inventoryItems, postgres: pg.inventoryItems });
  const updateOffers = tableFor(state.dialect, { sqlite: sqlite.updateOffers, postgres: pg.updateOffers });
  const siteEnvironments = tableFor(state.dialect, {
    sqlite: sqlite.siteEnvironments,
    postgres: pg.siteEnvironments,
  });
  const run = state.run.bind(state);
  return {
    /** Every site's own time zone that the inventory knows (the scheduler tick's cheap first pass). */
    async timeZones(): Promise<Map<string, string>> {
      const rows = await run((db) =>
        db
          .select({ siteId: siteEnvironments.siteId, timeZone: siteEnvironments.timeZone })
          .from(siteEnvironments)
          .where(isNotNull(siteEnvironments.timeZone)),
      );
      return new Map(rows.map((row) => [row.siteId, row.timeZone!]));
    },

    async updateStates(siteIds: readonly string[]): Promise<SiteUpdateState[]> {
      const states: SiteUpdateState[] = [];
      for (let i = 0; i < siteIds.length; i += CHUNK) {
        const ids = siteIds.slice(i, i + CHUNK);
        const byId = new Map<string, SiteUpdateState>();
        const base = await run((db) =>
          db
            .select({
              siteId: sites.id,
              wordpressVersion: sites.wordpressVersion,
              timeZone: siteEnvironments.timeZone,
            })
            .from(sites)
            .leftJoin(siteEnvironments, eq(siteEnvironments.siteId, sites.id))
            .where(inArray(sites.id, ids)),
        );
        for (const row of base)
          byId.set(row.siteId, {
            siteId: row.siteId,
            timeZone: row.timeZone ?? null,
            items: [],
            core: { version: row.wordpressVersion, offers: [] },
            translationsFirstSeenAt: null,
          });
        const offers = await run((db) => db.select().from(updateOffers).where(inArray(updateOffers.siteId, ids)));
        const seen = new Map(offers.map((o) => [`${o.siteId}\t${o.type}\t${o.slug}\t${o.version}`, o.firstSeenAt]));
        for (const offer of offers) {
          const state = byId.get(offer.siteId);
          if (!state) continue;
          if (offer.type === 'core') state.core.offers.push({ version: offer.version, firstSeenAt: offer.firstSeenAt });
          else if (
            offer.type === 'translation' &&
            (!state.translationsFirstSeenAt || offer.firstSeenAt < state.translationsFirstSeenAt)
          )
            state.translationsFirstSeenAt = offer.firstSeenAt;
        }
        const items = await run((db) =>
          db
            .select({
              siteId: inventoryItems.siteId,
              type: inventoryItems.type,
              slug: inventoryItems.slug,
              updateVersion: inventoryItems.updateVersion,
            })
            .from(inventoryItems)
            .where(and(inArray(inventoryItems.siteId, ids), isNotNull(inventoryItems.updateVersion))),
        );
        for (const item of items)
          byId.get(item.siteId)?.items.push({
            ...item,
            firstSeenAt: seen.get(`${item.siteId}\t${item.type}\t${item.slug}\t${item.updateVersion}`) ?? null,
          });
        for (const id of ids) {
          const state = byId.get(id);
          if (state) states.push(state);
        }
      }
      return states;
    },
  };
}

export type UpdateStateReader = ReturnType<typeof createUpdateStateReader>;
