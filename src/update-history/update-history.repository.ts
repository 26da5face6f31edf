import { and, desc, eq, gte, inArray, isNull, lt, ne, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import type { SiteScope } from '../shared/actor.js';
import { siteTags, visibleSites } from '../sites/index.js';
import {
  updateHistory,
  type UpdateHistoryRow,
  type TriggerKind,
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
  /** Who asked: the kind (`user`, `policy`, `request`), and which one (a user, policy or token id). */
  triggerKind?: TriggerKind;
  triggerId?: string;
  since?: Date;
  /** Attempts started before this time. */
  until?: Date;
  /** Newest first: rows before this id. */
  before?: string;
  limit: number;
  /** Only the entries of the sites a request may see (issue 33; absent: every site's). */
  scope?: SiteScope;
}

/** What an attempt's end writes: how it ended, the version the site reports (null keeps the one expected), why not. */
export interface AttemptEnd {
  result: UpdateResult;
  /** The version the site reported it had, when it says (else the one the attempt started with). */
  fromVersion?: string | null;
  toVersion?: string | null;
  reason?: string | null;
  error?: string | null;
  /** The safe update the attempt ran as, learnt as it ended (a safe item of a bulk update). */
  safeUpdateId?: string | null;
  finishedAt: Date;
}

export function createUpdateHistoryRepository({ db }: { db: Db }) {
  // Every attempt writes a row as it starts and again as it ends: prepared once, as building a
  // drizzle query costs about ten times what SQLite spends running it (bench/bulk-updates.ts).
  const p = <K extends string>(name: K) => sql.placeholder(name);
  const insertStarted = db
    .insert(updateHistory)
    .values({
      id: p('id'),
      siteId: p('siteId'),
      type: p('type'),
      slug: p('slug'),
      fromVersion: p('fromVersion'),
      toVersion: p('toVersion'),
      startedAt: p('startedAt'),
      triggerKind: p('triggerKind'),
      triggerId: p('triggerId'),
      jobId: p('jobId'),
      safeUpdateId: p('safeUpdateId'),
      restorePoint: p('restorePoint'),
      rollbackOf: p('rollbackOf'),
      result: p('result'),
    })
    .prepare();
  // What an end writes, by the row's id or by its safe update's (drizzle's `set` takes placeholders only inside sql,
  // so finishedAt goes in as its stored epoch milliseconds).
  const ended = {
    result: sql`${p('result')}`,
    fromVersion: sql`coalesce(${p('fromVersion')}, ${updateHistory.fromVersion})`,
    toVersion: sql`coalesce(${p('toVersion')}, ${updateHistory.toVersion})`,
    reason: sql`${p('reason')}`,
    error: sql`${p('error')}`,
    finishedAt: sql`${p('finishedAt')}`,
  };
  const updateEnded = db
    .update(updateHistory)
    .set({ ...ended, safeUpdateId: sql`coalesce(${p('safeUpdateId')}, ${updateHistory.safeUpdateId})` })
    .where(eq(updateHistory.id, p('id')))
    .prepare();
  // A safe update asked for through the API ends in its job, found by its report's id (the row may predate a restart).
  const safeUpdateEnded = db
    .update(updateHistory)
    .set(ended)
    .where(and(eq(updateHistory.safeUpdateId, p('safeUpdateId')), eq(updateHistory.result, 'running')))
    .prepare();
  /** An end's parameters: what it leaves out is null (kept as started, for the versions). */
  const endParameters = (end: AttemptEnd) => ({
    fromVersion: null,
    toVersion: null,
    reason: null,
    error: null,
    safeUpdateId: null,
    ...end,
    finishedAt: end.finishedAt.getTime(),
  });

  return {
    /** An attempt as it starts (not finished yet). */
    insert(
      row: Omit<UpdateHistoryRow, 'finishedAt' | 'reason' | 'error' | 'restorePoint' | 'rollbackOf'> &
        Partial<Pick<UpdateHistoryRow, 'restorePoint' | 'rollbackOf'>>,
    ): UpdateHistoryRow {
      const started = { restorePoint: null, rollbackOf: null, ...row };
      insertStarted.run(started);
      return { ...started, finishedAt: null, reason: null, error: null };
    },
    find: (siteId: string, id: string): UpdateHistoryRow | undefined =>
      db
        .select()
        .from(updateHistory)
        .where(and(eq(updateHistory.siteId, siteId), eq(updateHistory.id, id)))
        .get(),
    /** The rollbacks of an attempt that did not fail (running or done): it is rolled back, or being. */
    rollbackOf: (id: string): UpdateHistoryRow | undefined =>
      db
        .select()
        .from(updateHistory)
        .where(and(eq(updateHistory.rollbackOf, id), ne(updateHistory.result, 'failed')))
        .get(),
    finish: (id: string, end: AttemptEnd): void => void updateEnded.run({ ...endParameters(end), id }),
    /**
     * At start, before any work: every attempt still `running` that no queued safe update will end
     * was cut short by the last process (its site may or may not have changed); ended `failed` with
     * `reason`. How many.
     */
    endAbandoned: (end: { reason: string; error: string; finishedAt: Date }): number =>
      db
        .update(updateHistory)
        .set({ result: 'failed', reason: end.reason, error: end.error, finishedAt: end.finishedAt })
        .where(and(eq(updateHistory.result, 'running'), isNull(updateHistory.safeUpdateId)))
        .run().changes,
    /** Ends the running attempt of a safe update (none: not one asked for through the API); whether there was one. */
    finishSafeUpdate: (safeUpdateId: string, end: AttemptEnd & { fromVersion: string | null }): boolean =>
      safeUpdateEnded.run({ ...endParameters(end), safeUpdateId }).changes > 0,

    /** Newest first (ids are time-ordered). */
    list({
      siteId,
      tags = [],
      type,
      slug,
      result,
      triggerKind,
      triggerId,
      since,
      until,
      before,
      limit,
      scope,
    }: HistoryFilter): UpdateHistoryRow[] {
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
        scope === undefined ? undefined : visibleSites(scope, updateHistory.siteId),
        type === undefined ? undefined : eq(updateHistory.type, type),
        slug === undefined ? undefined : eq(updateHistory.slug, slug),
        result === undefined ? undefined : eq(updateHistory.result, result),
        triggerKind === undefined ? undefined : eq(updateHistory.triggerKind, triggerKind),
        triggerId === undefined ? undefined : eq(updateHistory.triggerId, triggerId),
        since === undefined ? undefined : gte(updateHistory.startedAt, since),
        until === undefined ? undefined : lt(updateHistory.startedAt, until),
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
