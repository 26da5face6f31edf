/**
 * What is read of a site's audits (one audit, the latest completed per form factor, the history, a
 * stored report) and the reports' retention: reports past it and reports of deleted audits removed.
 */
import type { Clock } from '../shared/clock.js';
import type { PerformanceConfig } from './performance.config.js';
import { performanceProblems } from './performance.errors.js';
import type { ReportStore } from './performance.reports.js';
import type { PerformanceRepository } from './performance.repository.js';
import type { AuditRow, FormFactor } from './performance.table.js';

export interface HistoryQuery {
  formFactor?: FormFactor;
  from?: Date;
  to?: Date;
  before?: string;
  limit: number;
}

export function createAuditQueries({
  repository,
  reports,
  clock,
  config,
  requireSite,
}: {
  repository: PerformanceRepository;
  reports: ReportStore;
  clock: Clock;
  config: Pick<PerformanceConfig, 'reportRetentionDays'>;
  /** Throws the sites feature's not-found problem for a site that does not exist. */
  requireSite: (siteId: string) => Promise<unknown>;
}) {
  async function get(siteId: string, auditId: string): Promise<AuditRow> {
    await requireSite(siteId);
    const audit = await repository.findById(auditId);
    if (!audit || audit.siteId !== siteId)
      throw performanceProblems.auditNotFound.create(`site ${siteId} has no audit ${auditId}`);
    return audit;
  }

  return {
    get,

    async latest(siteId: string): Promise<Record<FormFactor, AuditRow | null>> {
      await requireSite(siteId);
      return {
        mobile: (await repository.latestCompleted(siteId, 'mobile')) ?? null,
        desktop: (await repository.latestCompleted(siteId, 'desktop')) ?? null,
      };
    },

    /** limit + 1 rows, newest first, for toPage(). */
    async history(siteId: string, query: HistoryQuery): Promise<AuditRow[]> {
      await requireSite(siteId);
      return repository.history({ siteId, ...query, limit: query.limit + 1 });
    },

    async report(siteId: string, auditId: string): Promise<Buffer> {
      const audit = await get(siteId, auditId);
      const report = audit.reportBytes === null ? undefined : await reports.read(siteId, auditId);
      if (!report)
        throw performanceProblems.reportNotFound.create(
          audit.status === 'completed'
            ? `the report of ${auditId} was removed after ${config.reportRetentionDays} days`
            : `audit ${auditId} is ${audit.status}; only completed audits have a report`,
        );
      return report;
    },

    /** Removes reports past their retention and reports of deleted audits. */
    async cleanupReports(): Promise<number> {
      const cutoff = new Date(clock.now().getTime() - config.reportRetentionDays * 86_400_000);
      const expired = await repository.reportsFinishedBefore(cutoff);
      for (const audit of expired) {
        await reports.remove(audit.siteId, audit.id);
        await repository.update(audit.id, { reportBytes: null });
      }
      return expired.length + (await reports.removeOrphans((siteId) => repository.auditIdsOfSite(siteId)));
    },
  };
}
