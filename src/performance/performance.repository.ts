import { and, desc, eq, gte, inArray, isNotNull, lt, lte, or, type SQL } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { createJobsRepository } from '../jobs/jobs.repository.js';
import { sites } from '../sites/index.js';
import {
  performanceAudits,
  performanceSettings,
  type AuditRow,
  type AuditStatus,
  type FormFactor,
  type NewAuditRow,
  type PerformanceSettingsRow,
} from './performance.table.js';

export interface HistoryFilter {
  siteId: string;
  formFactor?: FormFactor;
  from?: Date;
  to?: Date;
  /** Newest first: ids below this one. */
  before?: string;
  limit: number;
}

export function createPerformanceRepository({ db }: { db: Db }) {
  return {
    /** The job rows audits share their id with (written by the job runner, the audit's with it; docs/jobs.md). */
    jobs: createJobsRepository({ db }),
    insert: (row: NewAuditRow): AuditRow => db.insert(performanceAudits).values(row).returning().get(),
    update: (id: string, changes: Partial<NewAuditRow>): AuditRow | undefined =>
      db.update(performanceAudits).set(changes).where(eq(performanceAudits.id, id)).returning().get(),
    findById: (id: string): AuditRow | undefined =>
      db.select().from(performanceAudits).where(eq(performanceAudits.id, id)).get(),

    /** Audits of a site, newest first. */
    history({ siteId, formFactor, from, to, before, limit }: HistoryFilter): AuditRow[] {
      const conditions: SQL[] = [eq(performanceAudits.siteId, siteId)];
      if (formFactor) conditions.push(eq(performanceAudits.formFactor, formFactor));
      if (from) conditions.push(gte(performanceAudits.queuedAt, from));
      if (to) conditions.push(lte(performanceAudits.queuedAt, to));
      if (before) conditions.push(lt(performanceAudits.id, before));
      return db
        .select()
        .from(performanceAudits)
        .where(and(...conditions))
        .orderBy(desc(performanceAudits.id))
        .limit(limit)
        .all();
    },

    latestCompleted: (siteId: string, formFactor: FormFactor): AuditRow | undefined =>
      db
        .select()
        .from(performanceAudits)
        .where(
          and(
            eq(performanceAudits.siteId, siteId),
            eq(performanceAudits.formFactor, formFactor),
            eq(performanceAudits.status, 'completed'),
          ),
        )
        .orderBy(desc(performanceAudits.id))
        .limit(1)
        .get(),

    /** The completed audits before `beforeId` of the same site and form factor, newest first. */
    recentCompleted: (siteId: string, formFactor: FormFactor, beforeId: string, limit: number): AuditRow[] =>
      db
        .select()
        .from(performanceAudits)
        .where(
          and(
            eq(performanceAudits.siteId, siteId),
            eq(performanceAudits.formFactor, formFactor),
            eq(performanceAudits.status, 'completed'),
            lt(performanceAudits.id, beforeId),
          ),
        )
        .orderBy(desc(performanceAudits.id))
        .limit(limit)
        .all(),

    pending: (siteId: string, formFactor: FormFactor): AuditRow | undefined =>
      db
        .select()
        .from(performanceAudits)
        .where(
          and(
            eq(performanceAudits.siteId, siteId),
            eq(performanceAudits.formFactor, formFactor),
            inArray(performanceAudits.status, ['queued', 'running']),
          ),
        )
        .get(),

    withStatus: (status: AuditStatus): AuditRow[] =>
      db
        .select()
        .from(performanceAudits)
        .where(eq(performanceAudits.status, status))
        .orderBy(performanceAudits.id)
        .all(),

    /** Audits with a report on disk that finished before `finishedBefore`. */
    reportsFinishedBefore: (finishedBefore: Date): AuditRow[] =>
      db
        .select()
        .from(performanceAudits)
        .where(and(isNotNull(performanceAudits.reportBytes), lt(performanceAudits.finishedAt, finishedBefore)))
        .all(),

    /** Audits of the site whose report file is theirs to keep: stored (`reportBytes`), or still queued or running. */
    auditIdsOfSite: (siteId: string): Set<string> =>
      new Set(
        db
          .select({ id: performanceAudits.id })
          .from(performanceAudits)
          .where(
            and(
              eq(performanceAudits.siteId, siteId),
              or(isNotNull(performanceAudits.reportBytes), inArray(performanceAudits.status, ['queued', 'running'])),
            ),
          )
          .all()
          .map((row) => row.id),
      ),

    readSettings: (siteId: string): PerformanceSettingsRow | undefined =>
      db.select().from(performanceSettings).where(eq(performanceSettings.siteId, siteId)).get(),

    writeSettings(row: PerformanceSettingsRow): PerformanceSettingsRow {
      const { siteId: _siteId, ...changes } = row;
      return db
        .insert(performanceSettings)
        .values(row)
        .onConflictDoUpdate({ target: performanceSettings.siteId, set: changes })
        .returning()
        .get();
    },

    /** Connected sites with their settings row, if any: what the scheduler looks at. */
    connectedSites: (): { id: string; url: string; settings: PerformanceSettingsRow | null }[] =>
      db
        .select({ id: sites.id, url: sites.url, settings: performanceSettings })
        .from(sites)
        .leftJoin(performanceSettings, eq(performanceSettings.siteId, sites.id))
        .where(eq(sites.state, 'connected'))
        .all(),
  };
}

export type PerformanceRepository = ReturnType<typeof createPerformanceRepository>;
