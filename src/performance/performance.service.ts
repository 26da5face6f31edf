import { isIP } from 'node:net';
import type { Logger } from 'pino';
import {
  CANCELLED_MESSAGE,
  jobEvent,
  wasCancelled,
  type JobEvent,
  type JobOutcome,
  type Settlement,
} from '../jobs/job-kind.js';
import { createJobRunner, type JobRunner } from '../jobs/job-runner.js';
import type { JobMetrics } from '../metrics/metrics.js';
import type { Clock } from '../shared/clock.js';
import { isAddressNotAllowed, type NetworkPolicy } from '../shared/network-policy.js';
import { createId } from '../shared/ids.js';
import { sitesProblems, type SitesRepository } from '../sites/index.js';
import type { AuditSummary } from './audit-protocol.js';
import { killProcessesNaming, type AuditOutcome, type AuditRunner } from './audit-runner.js';
import { performanceProblems } from './performance.errors.js';
import type { PerformanceRepository } from './performance.repository.js';
import type { ReportStore } from './performance.reports.js';
import {
  formFactors,
  type AuditFailureReason,
  type AuditRow,
  type AuditTrigger,
  type FormFactor,
  type PerformanceSettingsRow,
} from './performance.table.js';
import { detectRegressions, type AuditFigures } from './regression.js';
import { isDue, latestSlot } from '../jobs/spread.js';
import type { Events } from '../shared/event-bus.js';

export interface PerformanceConfig {
  chromePath: string;
  concurrency: number;
  /** Hard limit of one Lighthouse run; an audit of n runs gets n times this. */
  timeoutMs: number;
  defaultRuns: number;
  intervalHours: number;
  reportRetentionDays: number;
  regressionMarginPercent: number;
  blockThirdParty: boolean;
  /** Scheduling priority (nice, 0–19) of the audit worker and its Chromium: the daemon keeps the CPU it needs. */
  nice: number;
}

export interface PerformanceSettings {
  enabled: boolean;
  formFactors: FormFactor[];
  runs: number;
  /** Hours between scheduled audits (the site's own, else the configured default). */
  intervalHours: number;
}

/** A settings change; `intervalHours: null` restores the configured default. */
export type PerformanceSettingsPatch = Partial<Omit<PerformanceSettings, 'intervalHours'>> & {
  intervalHours?: number | null;
};

export interface HistoryQuery {
  formFactor?: FormFactor;
  from?: Date;
  to?: Date;
  before?: string;
  limit: number;
}

/** Recent audits a new one is compared with. */
const REGRESSION_WINDOW = 5;

export interface PerformanceServiceDeps {
  repository: PerformanceRepository;
  sitesRepository: SitesRepository;
  runner: AuditRunner;
  reports: ReportStore;
  /** The audited host is resolved and checked here; Chromium is pinned to the address allowed. */
  network: NetworkPolicy;
  clock: Clock;
  logger: Logger;
  events: Events;
  config: PerformanceConfig;
  metrics?: JobMetrics;
  /** The daemon's job runner; a service of its own (tests) runs its audits on a runner of its own. */
  jobs?: JobRunner;
}

const KINDS = ['audit'] as const;

/**
 * Lighthouse audits: the scheduler and the API only enqueue (a persisted `queued` row, a job of
 * kind `audit`); the job runner runs each audit in a worker process with bounded concurrency.
 */
export function createPerformanceService({
  repository,
  sitesRepository,
  runner,
  reports,
  network,
  clock,
  logger,
  events,
  config,
  metrics,
  jobs = createJobRunner({ repository: repository.jobs, clock, logger, events }),
}: PerformanceServiceDeps) {
  function requireSite(siteId: string) {
    const site = sitesRepository.findById(siteId);
    if (!site) throw sitesProblems.notFound.create(`there is no site ${siteId}`);
    return site;
  }

  const settingsOf = (siteId: string): PerformanceSettings => settingsFrom(repository.readSettings(siteId));

  function settingsFrom(row: PerformanceSettingsRow | null | undefined): PerformanceSettings {
    if (!row)
      return {
        enabled: true,
        formFactors: [...formFactors],
        runs: config.defaultRuns,
        intervalHours: config.intervalHours,
      };
    return {
      enabled: row.enabled,
      formFactors: row.formFactors
        .split(',')
        .filter((value): value is FormFactor => (formFactors as readonly string[]).includes(value)),
      runs: row.runs,
      intervalHours: row.intervalHours ?? config.intervalHours,
    };
  }

  function createAudit(
    site: { id: string; url: string },
    formFactor: FormFactor,
    runs: number,
    trigger: AuditTrigger,
  ): AuditRow {
    const pending = repository.pending(site.id, formFactor);
    if (pending) return pending;
    const now = clock.now();
    const id = createId('perf', now);
    // The audit's row and its job row, written together; the job runner writes the job row from then on.
    return jobs.submit(
      { id, kind: 'audit', siteId: site.id, params: { url: site.url, formFactor, trigger, runs }, createdAt: now },
      () =>
        repository.insert({
          id,
          siteId: site.id,
          url: site.url,
          formFactor,
          trigger,
          runs,
          status: 'queued',
          queuedAt: now,
        }),
    ).own;
  }

  function store(audit: AuditRow, outcome: AuditOutcome): AuditRow | undefined {
    const finishedAt = clock.now();
    if (outcome.ok) {
      const { summary } = outcome;
      return repository.update(audit.id, {
        status: 'completed',
        finishedAt,
        ...columnsOf(summary),
        reportBytes: summary.reportBytes,
      });
    }
    return repository.update(audit.id, {
      status: 'failed',
      finishedAt,
      failureReason: outcome.reason,
      failureMessage: outcome.message.slice(0, 1000),
    });
  }

  function regressionsOf(audit: AuditRow): JobEvent[] {
    const recent = repository
      .recentCompleted(audit.siteId, audit.formFactor, audit.id, REGRESSION_WINDOW)
      .map(figuresOf);
    const regressions = detectRegressions(figuresOf(audit), recent, config.regressionMarginPercent);
    if (regressions.length === 0) return [];
    return [
      jobEvent('performance.regressed', {
        siteId: audit.siteId,
        url: audit.url,
        auditId: audit.id,
        formFactor: audit.formFactor,
        regressions,
      }),
    ];
  }

  /**
   * How an audit's job ended, from its row: `completed` succeeded, `failed` failed (a cancel is
   * the job's alone: the audit says `failed`, `interrupted`).
   */
  const auditOutcome = (audit: AuditRow): JobOutcome => ({
    state: audit.status === 'completed' ? 'succeeded' : 'failed',
    reason: audit.failureReason,
    message: audit.failureMessage,
    finishedAt: audit.finishedAt ?? undefined,
  });

  /**
   * Runs one queued audit, its job `running` since `started` (the job runner's); a signal aborted
   * by a stop of the daemon makes its failure `interrupted`.
   */
  async function execute(auditId: string, signal: AbortSignal, started = clock.now()): Promise<Settlement> {
    const queued = repository.findById(auditId);
    if (!queued) return { events: [], outcome: { state: 'failed', reason: 'not-found', message: 'the audit is gone' } };
    if (queued.status !== 'queued') return { events: [], outcome: auditOutcome(queued) };
    const audit = repository.update(auditId, { status: 'running', startedAt: started })!;
    const runs = audit.runs;
    const target = await auditedAddress(audit.url);
    let outcome: AuditOutcome = !target.ok
      ? target
      : await runner.run(
          {
            url: audit.url,
            formFactor: audit.formFactor,
            runs,
            chromePath: config.chromePath,
            workDir: reports.workDirOf(audit.id),
            reportPath: reports.pathOf(audit.siteId, audit.id),
            maxWaitForLoadMs: Math.min(45_000, Math.floor(config.timeoutMs / 2)),
            blockThirdParty: config.blockThirdParty,
            address: target.address,
          },
          config.timeoutMs * runs,
          signal,
        );
    const cancelled = wasCancelled(signal);
    if (cancelled) outcome = { ok: false, reason: 'interrupted', message: CANCELLED_MESSAGE };
    else if (signal.aborted && !outcome.ok)
      outcome = { ok: false, reason: 'interrupted', message: 'the daemon shut down while the audit ran' };
    const stored = store(audit, outcome);
    // The site (and with it the audit) may have been removed while the audit ran.
    if (!stored || !outcome.ok) await reports.remove(audit.siteId, audit.id);
    // An audit has no cancelled status of its own: its job's is `cancelled`.
    if (cancelled)
      return { events: [], outcome: { state: 'cancelled', reason: 'cancelled', message: CANCELLED_MESSAGE } };
    if (!stored) return { events: [], outcome: { state: 'failed', reason: 'not-found', message: 'the audit is gone' } };
    const jobOutcome = auditOutcome(stored);
    metrics?.observeJob(
      'audit',
      outcome.ok ? 'completed' : 'failed',
      (stored.finishedAt ?? clock.now()).getTime() - (stored.startedAt ?? clock.now()).getTime(),
    );
    if (outcome.ok) {
      logger.info(
        {
          siteId: stored.siteId,
          auditId: stored.id,
          formFactor: stored.formFactor,
          performance: stored.scorePerformance,
        },
        'performance audit completed',
      );
      return { events: regressionsOf(stored), outcome: jobOutcome };
    }
    return {
      outcome: jobOutcome,
      events: [auditFailed(stored, outcome.reason, outcome.message)],
      interrupted: outcome.reason === 'interrupted',
    };
  }

  /**
   * Where Chromium may reach the audited host: resolved and checked against the network policy here, before any
   * browser starts (`address_not_allowed` when refused; a name that does not resolve is `page_unreachable`).
   */
  async function auditedAddress(
    url: string,
  ): Promise<{ ok: true; address: string | null } | { ok: false; reason: AuditFailureReason; message: string }> {
    const host = new URL(url).hostname;
    try {
      const [first] = await network.resolve(host);
      return { ok: true, address: isIP(host.replace(/^\[|\]$/g, '')) ? null : first!.address };
    } catch (error) {
      if (isAddressNotAllowed(error)) return { ok: false, reason: 'address_not_allowed', message: error.message };
      return { ok: false, reason: 'page_unreachable', message: `${host}: ${(error as Error).message}` };
    }
  }

  const auditFailed = (audit: AuditRow, reason: string, message: string) =>
    jobEvent('performance.audit_failed', {
      siteId: audit.siteId,
      url: audit.url,
      auditId: audit.id,
      formFactor: audit.formFactor,
      reason,
      message,
    });

  function fail(audit: { id: string }, message: string): AuditRow | undefined {
    return repository.update(audit.id, {
      status: 'failed',
      finishedAt: clock.now(),
      failureReason: 'interrupted',
      failureMessage: message,
    });
  }

  // A cancelled audit (its worker killed if it ran) says `failed`, `interrupted`; its job says `cancelled`.
  jobs.register('audit', {
    pool: { name: 'audits', concurrency: config.concurrency },
    exclusive: false,
    jobRow: 'runner',
    atShutdown: 'abort',
    cancelsWhileRunning: true,
    run: (job, signal) => execute(job.id, signal, job.startedAt ?? undefined),
    cancelQueued: (job, message) => void fail(job, message),
    recover: {
      running(job) {
        const row = repository.findById(job.id)!;
        // It had ended: the process stopped before its job row was written (nor its events logged).
        if (row.status !== 'queued' && row.status !== 'running')
          return { events: [], outcome: auditOutcome(row), interrupted: false };
        const message = 'the daemon stopped while the audit ran';
        const audit = fail(job, message)!;
        return { outcome: auditOutcome(audit), events: [auditFailed(audit, 'interrupted', message)] };
      },
    },
  });

  function get(siteId: string, auditId: string): AuditRow {
    requireSite(siteId);
    const audit = repository.findById(auditId);
    if (!audit || audit.siteId !== siteId)
      throw performanceProblems.auditNotFound.create(`site ${siteId} has no audit ${auditId}`);
    return audit;
  }

  /** Checks a `performance` settings patch and returns the write that applies it (site settings route). */
  function prepareSettings(
    siteId: string,
    { intervalHours, ...changes }: PerformanceSettingsPatch,
  ): () => PerformanceSettings {
    requireSite(siteId);
    return () => {
      const current = repository.readSettings(siteId);
      const next = { ...settingsOf(siteId), ...changes };
      repository.writeSettings({
        siteId,
        enabled: next.enabled,
        formFactors: [...new Set(next.formFactors)].join(','),
        runs: next.runs,
        intervalHours: intervalHours === undefined ? (current?.intervalHours ?? null) : intervalHours,
        lastScheduledAt: current?.lastScheduledAt ?? null,
      });
      return settingsOf(siteId);
    };
  }

  return {
    get,

    settings: (siteId: string): PerformanceSettings => {
      requireSite(siteId);
      return settingsOf(siteId);
    },

    prepareSettings,
    updateSettings: (siteId: string, patch: PerformanceSettingsPatch): PerformanceSettings =>
      prepareSettings(siteId, patch)(),

    /** An on-demand audit; an audit of that form factor already waiting or running is returned instead. */
    requestAudit(siteId: string, options: { formFactor?: FormFactor; runs?: number }): AuditRow {
      const site = requireSite(siteId);
      const settings = settingsOf(siteId);
      return createAudit(
        site,
        options.formFactor ?? settings.formFactors[0] ?? 'mobile',
        options.runs ?? settings.runs,
        'manual',
      );
    },

    latest(siteId: string): Record<FormFactor, AuditRow | null> {
      requireSite(siteId);
      return {
        mobile: repository.latestCompleted(siteId, 'mobile') ?? null,
        desktop: repository.latestCompleted(siteId, 'desktop') ?? null,
      };
    },

    /** limit + 1 rows, newest first, for toPage(). */
    history(siteId: string, query: HistoryQuery): AuditRow[] {
      requireSite(siteId);
      return repository.history({ siteId, ...query, limit: query.limit + 1 });
    },

    async report(siteId: string, auditId: string): Promise<Buffer> {
      const audit = get(siteId, auditId);
      const report = audit.reportBytes === null ? undefined : await reports.read(siteId, auditId);
      if (!report)
        throw performanceProblems.reportNotFound.create(
          audit.status === 'completed'
            ? `the report of ${auditId} was removed after ${config.reportRetentionDays} days`
            : `audit ${auditId} is ${audit.status}; only completed audits have a report`,
        );
      return report;
    },

    /** Cron tick: enqueues the audits of every connected site whose slot has come. Returns how many. */
    enqueueDue(): number {
      const now = clock.now();
      let enqueued = 0;
      for (const site of repository.connectedSites()) {
        const settings = settingsFrom(site.settings);
        const intervalMs = settings.intervalHours * 3_600_000;
        if (!settings.enabled || !isDue(site.id, intervalMs, site.settings?.lastScheduledAt ?? null, now)) continue;
        repository.writeSettings({
          siteId: site.id,
          enabled: settings.enabled,
          formFactors: settings.formFactors.join(','),
          runs: settings.runs,
          intervalHours: site.settings?.intervalHours ?? null,
          lastScheduledAt: latestSlot(site.id, intervalMs, now),
        });
        for (const formFactor of settings.formFactors) {
          createAudit(site, formFactor, settings.runs, 'scheduled');
          enqueued++;
        }
      }
      return enqueued;
    },

    /**
     * At start: audits that were running when the daemon stopped fail as `interrupted` (re-running
     * one that may have crashed the daemon could crash it again), their workers and Chromes still
     * running are killed and their work files removed; queued ones are queued again.
     */
    recover(): { requeued: number; interrupted: number } {
      const killed = killProcessesNaming(reports.workRoot);
      if (killed > 0) logger.warn({ processes: killed }, 'killed audit processes a stopped daemon left running');
      reports.clearWork();
      return jobs.recover(KINDS);
    },

    /** Removes reports past their retention and reports of deleted audits. */
    async cleanupReports(): Promise<number> {
      const cutoff = new Date(clock.now().getTime() - config.reportRetentionDays * 86_400_000);
      const expired = repository.reportsFinishedBefore(cutoff);
      for (const audit of expired) {
        await reports.remove(audit.siteId, audit.id);
        repository.update(audit.id, { reportBytes: null });
      }
      return expired.length + (await reports.removeOrphans((siteId) => repository.auditIdsOfSite(siteId)));
    },

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

function columnsOf(summary: AuditSummary) {
  return {
    lighthouseVersion: summary.lighthouseVersion,
    chromeVersion: summary.chromeVersion,
    scorePerformance: summary.scores.performance,
    scoreAccessibility: summary.scores.accessibility,
    scoreBestPractices: summary.scores.bestPractices,
    scoreSeo: summary.scores.seo,
    ...summary.metrics,
  };
}

function figuresOf(audit: AuditRow): AuditFigures {
  return {
    scores: { performance: audit.scorePerformance },
    metrics: {
      firstContentfulPaintMs: audit.firstContentfulPaintMs,
      largestContentfulPaintMs: audit.largestContentfulPaintMs,
      totalBlockingTimeMs: audit.totalBlockingTimeMs,
      cumulativeLayoutShift: audit.cumulativeLayoutShift,
    },
  };
}

export type PerformanceService = ReturnType<typeof createPerformanceService>;
