import { and, desc, eq, inArray, lt, or, type SQL } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { jobs, type JobRow, type JobState, type NewJobRow } from './jobs.table.js';

export interface JobFilter {
  siteId?: string;
  kind?: string;
  state?: JobState;
  /** Newest first: jobs before this (createdAt, id) key. */
  before?: { createdAt: Date; id: string };
  limit: number;
}

export function createJobsRepository({ db }: { db: Db }) {
  return {
    find: (id: string): JobRow | undefined => db.select().from(jobs).where(eq(jobs.id, id)).get(),
    /** For kinds with no table of their own: their job row is all there is to write. */
    insert: (row: NewJobRow): JobRow => db.insert(jobs).values(row).returning().get(),
    update: (id: string, changes: Partial<NewJobRow>): JobRow | undefined =>
      db.update(jobs).set(changes).where(eq(jobs.id, id)).returning().get(),

    /** Newest first; ids of different kinds do not sort by time, so creation time leads. */
    list({ siteId, kind, state, before, limit }: JobFilter): JobRow[] {
      const conditions: (SQL | undefined)[] = [
        siteId === undefined ? undefined : eq(jobs.siteId, siteId),
        kind === undefined ? undefined : eq(jobs.kind, kind),
        state === undefined ? undefined : eq(jobs.state, state),
        before === undefined
          ? undefined
          : or(lt(jobs.createdAt, before.createdAt), and(eq(jobs.createdAt, before.createdAt), lt(jobs.id, before.id))),
      ];
      return db
        .select()
        .from(jobs)
        .where(and(...conditions))
        .orderBy(desc(jobs.createdAt), desc(jobs.id))
        .limit(limit)
        .all();
    },

    /** Jobs of `kind` a previous process left in `state`, oldest first (start-up recovery). */
    unfinished: (kind: string, state: 'queued' | 'running'): JobRow[] =>
      db
        .select()
        .from(jobs)
        .where(and(eq(jobs.kind, kind), eq(jobs.state, state)))
        .orderBy(jobs.id)
        .all(),

    /** Marks a job cancelled unless it already finished; false if it had. */
    markCancelled(id: string, at: Date, message: string): boolean {
      return (
        db
          .update(jobs)
          .set({ state: 'cancelled', reason: 'cancelled', message, finishedAt: at })
          .where(and(eq(jobs.id, id), inArray(jobs.state, ['queued', 'running'])))
          .run().changes > 0
      );
    },

    /** Runs `work` (synchronous writes through any repository on this database) in one SQLite transaction. */
    transaction: <T>(work: () => T): T => db.transaction(() => work()),
  };
}

export type JobsRepository = ReturnType<typeof createJobsRepository>;
