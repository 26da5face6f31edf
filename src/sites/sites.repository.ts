import { and, asc, eq, gt, inArray, isNull, lt, lte, or, type SQL } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { siteInventories, sites, type NewSiteRow, type SiteRow, type SiteState } from './sites.table.js';

export interface Inventory {
  pluginsJson: string;
  themesJson: string;
  syncedAt: Date;
}

export function createSitesRepository({ db }: { db: Db }) {
  return {
    insert(row: NewSiteRow): SiteRow {
      return db.insert(sites).values(row).returning().get();
    },
    findById: (id: string): SiteRow | undefined => db.select().from(sites).where(eq(sites.id, id)).get(),
    findByUrl: (url: string): SiteRow | undefined => db.select().from(sites).where(eq(sites.url, url)).get(),
    findByAuthorizationState: (stateHash: string): SiteRow | undefined => db.select().from(sites).where(eq(sites.authorizationStateHash, stateHash)).get(),

    list({ limit, after, states }: { limit: number; after?: string; states?: SiteState[] }): SiteRow[] {
      const conditions: SQL[] = [];
      if (after) conditions.push(gt(sites.id, after));
      if (states && states.length > 0) conditions.push(inArray(sites.state, states));
      return db
        .select()
        .from(sites)
        .where(and(...conditions))
        .orderBy(asc(sites.id))
        .limit(limit)
        .all();
    },

    update(id: string, changes: Partial<NewSiteRow>): SiteRow | undefined {
      return db.update(sites).set(changes).where(eq(sites.id, id)).returning().get();
    },

    delete(id: string): boolean {
      return db.delete(sites).where(eq(sites.id, id)).run().changes > 0;
    },

    /** Connected sites whose inventory is older than `syncedBefore` (or never synced), oldest first. */
    dueForSync(syncedBefore: Date, limit: number): SiteRow[] {
      return db
        .select()
        .from(sites)
        .where(and(eq(sites.state, 'connected'), or(isNull(sites.lastSyncAttemptAt), lt(sites.lastSyncAttemptAt, syncedBefore))))
        .orderBy(asc(sites.lastSyncAttemptAt))
        .limit(limit)
        .all();
    },

    expiredAuthorizations: (now: Date): SiteRow[] =>
      db
        .select()
        .from(sites)
        .where(and(eq(sites.state, 'pending'), lte(sites.authorizationExpiresAt, now)))
        .all(),

    readInventory: (siteId: string): Inventory | undefined => db.select().from(siteInventories).where(eq(siteInventories.siteId, siteId)).get(),

    writeInventory(siteId: string, inventory: Inventory): void {
      db.insert(siteInventories)
        .values({ siteId, ...inventory })
        .onConflictDoUpdate({ target: siteInventories.siteId, set: inventory })
        .run();
    },
  };
}

export type SitesRepository = ReturnType<typeof createSitesRepository>;
