import { and, desc, eq, gte, inArray, lt, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { siteTags } from '../sites/index.js';
import {
  updateHistory,
  type NewUpdateHistoryRow,
  type UpdateHistoryRow,
  type UpdateItemType,
  type UpdateResult,
} from './update-history.table.js';

export interface HistoryFilter {
  siteId?: string;
  /** Only sites carrying every one of these tags. */
  tags?: string[];
  type?: UpdateItemType;
  slug?: string;
  result?: UpdateResult;
  since?: Date;
  /** Newest first: rows before this id. */
  before?: string;
  limit: number;
}

export function createUpdateHistoryRepository({ db }: { db: Db }) {
  return {
    insert: (row: NewUpdateHistoryRow): UpdateHistoryRow => db.insert(updateHistory).values(row).returning().get(),
    finish: (id: string, changes: Partial<NewUpdateHistoryRow>): void =>
      void db.update(updateHistory).set(changes).where(eq(updateHistory.id, id)).run(),

    /** Newest first (ids are time-ordered). */
    list({ siteId, tags = [], type, slug, result, since, before, limit }: HistoryFilter): UpdateHistoryRow[] {
      const unique = [...new Set(tags)];
      const tagged =
        unique.length === 0
          ? undefined
          : inArray(
              updateHistory.siteId,
              db
                .select({ siteId: siteTags.siteId })
                .from(siteTags)
                .where(inArray(siteTags.tag, unique))
                .groupBy(siteTags.siteId)
                .having(sql`count(distinct ${siteTags.tag}) = ${unique.length}`),
            );
      const conditions: (SQL | undefined)[] = [
        siteId === undefined ? undefined : eq(updateHistory.siteId, siteId),
        tagged,
        type === undefined ? undefined : eq(updateHistory.type, type),
        slug === undefined ? undefined : eq(updateHistory.slug, slug),
        result === undefined ? undefined : eq(updateHistory.result, result),
        since === undefined ? undefined : gte(updateHistory.startedAt, since),
        before === undefined ? undefined : lt(updateHistory.id, before),
      ];
      return db
        .select()
        .from(updateHistory)
        .where(and(...conditions))
        .orderBy(desc(updateHistory.id))
        .limit(limit)
        .all();
    },

    ofJob: (jobId: string): UpdateHistoryRow[] =>
      db.select().from(updateHistory).where(eq(updateHistory.jobId, jobId)).orderBy(updateHistory.id).all(),
  };
}

export type UpdateHistoryRepository = ReturnType<typeof createUpdateHistoryRepository>;
