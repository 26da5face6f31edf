import { eq } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import type { RetentionPolicy } from '../retention.js';
import { removedSites } from './removed-sites.table.js';

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

export function createRemovedSitesRepository({ db }: { db: Db }) {
  return {
    record(siteId: string, removedAt: Date, keepUntil: Date): void {
      db.insert(removedSites)
        .values({ siteId, removedAt, keepUntil })
        .onConflictDoUpdate({ target: removedSites.siteId, set: { removedAt, keepUntil } })
        .run();
    },
    find: (siteId: string) => db.select().from(removedSites).where(eq(removedSites.siteId, siteId)).get(),
  };
}

export type RemovedSitesRepository = ReturnType<typeof createRemovedSitesRepository>;
