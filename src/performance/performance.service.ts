// The performance feature's service: Lighthouse audits asked for (`requestAudit`) or scheduled
// (`enqueueDue`), a site's audit settings, recovery at start and the stop. The job kind that runs an
// audit is audit-job.ts, the schedule audit-schedule.ts, the settings audit-settings.ts, the reads and
// the reports' retention audit-queries.ts.
import type { Logger } from 'pino';
import type { JobRunner } from '../jobs/job-runner.js';
import type { JobMetrics } from '../metrics/metrics.js';
import type { Clock } from '../shared/clock.js';
import type { NetworkPolicy } from '../shared/network-policy.js';
import { sitesProblems, type SitesRepository } from '../sites/index.js';
import { createAuditJob } from './audit-job.js';
import { createAuditQueries } from './audit-queries.js';
import { killProcessesNaming, type AuditRunner } from './audit-runner.js';
import { createAuditSchedule } from './audit-schedule.js';
import { createAuditSettings, type PerformanceSettings, type PerformanceSettingsPatch } from './audit-settings.js';
import type { PerformanceConfig } from './performance.config.js';
import type { PerformanceRepository } from './performance.repository.js';
import type { ReportStore } from './performance.reports.js';
import type { AuditRow, FormFactor } from './performance.table.js';

export type { PerformanceConfig } from './performance.config.js';

export interface PerformanceServiceDeps {
  repository: PerformanceRepository;
  sitesRepository: SitesRepository;
  runner: AuditRunner;
  reports: ReportStore;
  /** The audited host is resolved and checked here; Chromium is pinned to the address allowed. */
  network: NetworkPolicy;
  clock: Clock;
  logger: Logger;
  config: PerformanceConfig;
  metrics?: JobMetrics;
  /** The job runner its audits run on: the daemon's, or one of a test's own. */
  jobs: JobRunner;
}

const KINDS = ['audit'] as const;

/**
 * Lighthouse audits: the scheduler and the API only enqueue (a persisted `queued` row, a job of
 * kind `audit`); the job runner runs each audit in a worker process with bounded concurrency.
 */
export function createPerformanceService(deps: PerformanceServiceDeps) {
  const { repository, sitesRepository, runner, reports, clock, logger, config, jobs } = deps;

  async function requireSite(siteId: string) {
    const site = await sitesRepository.findById(siteId);
    if (!site) throw sitesProblems.notFound.create(`there is no site ${siteId}`);
    return site;
  }

  const { settingsFrom, settingsOf, writeOf } = createAuditSettings({ repository, config });
  const { createAudit } = createAuditJob({ ...deps, jobs });
  const { enqueueDue } = createAuditSchedule({ repository, clock, settingsFrom, createAudit });
  const queries = createAuditQueries({ repository, reports, clock, config, requireSite });

  /** Checks a `performance` settings patch and returns the write that applies it (site settings route). */
  async function prepareSettings(
    siteId: string,
    patch: PerformanceSettingsPatch,
  ): Promise<() => Promise<PerformanceSettings>> {
    await requireSite(siteId);
    return writeOf(siteId, patch);
  }

  return {
    get: queries.get,

    settings: async (siteId: string): Promise<PerformanceSettings> => {
      await requireSite(siteId);
      return settingsOf(siteId);
    },

    prepareSettings,
    updateSettings: async (siteId: string, patch: PerformanceSettingsPatch): Promise<PerformanceSettings> =>
      (await prepareSettings(siteId, patch))(),

    /** An on-demand audit; an audit of that form factor already waiting or running is returned instead. */
    async requestAudit(siteId: string, options: { formFactor?: FormFactor; runs?: number }): Promise<AuditRow> {
      const site = await requireSite(siteId);
      const settings = await settingsOf(siteId);
      return createAudit(
        site,
        options.formFactor ?? settings.formFactors[0] ?? 'mobile',
        options.runs ?? settings.runs,
        'manual',
      );
    },

    latest: queries.latest,
    /** limit + 1 rows, newest first, for toPage(). */
    history: queries.history,
    report: queries.report,

    /** Cron tick: enqueues the audits of every connected site whose slot has come. Returns how many. */
    enqueueDue,

    /**
     * At start: audits that were running when the daemon stopped fail as `interrupted` (re-running
     * one that may have crashed the daemon could crash it again), their workers and Chromes still
     * running are killed and their work files removed; queued ones are queued again.
     */
    recover(): Promise<{ requeued: number; interrupted: number }> {
      const killed = killProcessesNaming(reports.workRoot);
      if (killed > 0) logger.warn({ processes: killed }, 'killed audit processes a stopped daemon left running');
      reports.clearWork();
      return jobs.recover(KINDS);
    },

    /** Removes reports past their retention and reports of deleted audits. */
    cleanupReports: queries.cleanupReports,

    /** Resolves when nothing is queued or running (tests, the benchmark). */
    idle: () => jobs.idle(KINDS),
    /** Audits waiting or running (metrics, readiness). */
    get queueDepth() {
      return jobs.queueDepth(KINDS);
    },

    /** Shutdown: queued audits stay queued for the next start; running ones are killed and fail as `interrupted`. */
    async stop(): Promise<void> {
      // Stops the pool and aborts the running audits' signals first, so no waiting audit starts in a freed slot.
      const stopped = jobs.stop(KINDS, { graceMs: 0, settleMs: Number.POSITIVE_INFINITY });
      runner.killAll();
      await stopped;
    },
  };
}

export type PerformanceService = ReturnType<typeof createPerformanceService>;
