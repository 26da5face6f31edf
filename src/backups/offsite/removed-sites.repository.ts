import { eq } from 'drizzle-orm';
import { firstRow, tableFor } from '../../db/dialect.js';
import type { StateDatabase } from '../../db/state-db.js';
import type { RetentionPolicy } from '../retention.js';
import { removedSites as pgRemovedSites } from './removed-sites.pg-table.js';
import { removedSites as sqliteRemovedSites } from './removed-sites.table.js';

const DAY_MS = 86_400_000;

/**
 * How long a removed site's offsite snapshots are kept: as long as its retention would have kept
 * the last backup of a site backed up daily, the longest of `keepDays` days, `keepLast` backups
 * (days), `keepDaily` days, `keepWeekly` weeks, `keepMonthly` months and `keepYearly` years.
 */
export function retentionHorizonMs(policy: RetentionPolicy): number {
  return (
    DAY_MS *
    Math.max(
      policy.keepDays,
      policy.keepLast,
      policy.keepDaily,
      7 * policy.keepWeekly,
      31 * policy.keepMonthly,
      366 * policy.keepYearly,
    )
  );
}

/** The sites removed from this daemon (`removed_sites`) on either dialect (issue 34, docs/design/cluster-state.md). */
export function createRemovedSitesRepository(state: StateDatabase) {
  const removedSites = tableFor(state.dialect, { sqlite: sqliteRemovedSites, postgres: pgRemovedSites });
  return {
    /** Remembers the site removed at `removedAt`, its snapshots kept until `keepUntil` (a site removed again: these dates). */
    async record(siteId: string, removedAt: Date, keepUntil: Date): Promise<void> {
      await state.run((db) =>
        db
          .insert(removedSites)
          .values({ siteId, removedAt, keepUntil })
          .onConflictDoUpdate({ target: removedSites.siteId, set: { removedAt, keepUntil } }),
      );
    },
    find: (siteId: string): Promise<typeof removedSites.$inferSelect | undefined> =>
      state.run((db) => db.select().from(removedSites).where(eq(removedSites.siteId, siteId)).then(firstRow)),
  };
}

export type RemovedSitesRepository = ReturnType<typeof createRemovedSitesRepository>;
