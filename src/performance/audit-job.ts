/**
 * The `audit` job kind: an audit written with its job (`createAudit`), one audit run in a worker
 * process and its row written from the outcome, the events it ends with (`performance.regressed`,
 * `performance.audit_failed`), and the kind registered with the job runner (cancel, recovery).
 */
import { rmSync } from 'node:fs';
import type { Logger } from 'pino';
import {
  CANCELLED_MESSAGE,
  jobEvent,
  wasCancelled,
  type JobEvent,
  type JobOutcome,
  type Settlement,
} from '../jobs/job-kind.js';
import type { JobRunner } from '../jobs/job-runner.js';
import type { JobMetrics } from '../metrics/metrics.js';
import type { Clock } from '../shared/clock.js';
import { createId } from '../shared/ids.js';
import type { NetworkPolicy } from '../shared/network-policy.js';
import type { AuditSummary } from './audit-protocol.js';
import type { AuditOutcome, AuditRunner } from './audit-runner.js';
import { auditedAddress } from './audited-address.js';
import type { PerformanceConfig } from './performance.config.js';
import type { ReportStore } from './performance.reports.js';
import { AuditPendingError, type PerformanceRepository } from './performance.repository.js';
import type { AuditRow, AuditTrigger, FormFactor } from './performance.table.js';
import { detectRegressions, type AuditFigures } from './regression.js';

/** Recent audits a new one is compared with. */
const REGRESSION_WINDOW = 5;

export function createAuditJob({
  repository,
  runner,
  reports,
  network,
  clock,
  logger,
  config,
  metrics,
  jobs,
}: {
  repository: PerformanceRepository;
  runner: AuditRunner;
  reports: ReportStore;
  network: NetworkPolicy;
  clock: Clock;
  logger: Logger;
  config: PerformanceConfig;
  metrics?: JobMetrics;
  jobs: JobRunner;
}) {
  /** A new queued audit and its job; an audit of that form factor already waiting or running is returned instead. */
  async function createAudit(
    site: { id: string; url: string },
    formFactor: FormFactor,
    runs: number,
    trigger: AuditTrigger,
  ): Promise<AuditRow> {
    const now = clock.now();
    const id = createId('perf', now);
    // The audit's row and its job row, written together unless an audit is pending (one transaction: whoever
    // asks at once, one audit); the job runner writes the job row from then on.
    try {
      const { own } = await jobs.submit(
        { id, kind: 'audit', siteId: site.id, params: { url: site.url, formFactor, trigger, runs }, createdAt: now },
        (tx) =>
          repository.insertWithJob(
            {
              id,
              siteId: site.id,
              url: site.url,
              formFactor,
              trigger,
              runs,
              status: 'queued',
              queuedAt: now,
            },
            tx,
          ),
      );
      return own;
    } catch (error) {
      if (error instanceof AuditPendingError) return error.audit;
      throw error;
    }
  }

  /** Stores the report the worker wrote: an audit whose report cannot be stored (a full disk, a bucket out of reach) failed. */
  async function storeReport(audit: AuditRow, outcome: AuditOutcome & { ok: true }): Promise<AuditOutcome> {
    try {
      const { bytes } = await reports.put(audit.siteId, audit.id, reports.scratchPathOf(audit.id));
      return { ok: true, summary: { ...outcome.summary, reportBytes: bytes } };
    } catch (error) {
      logger.warn({ err: error, siteId: audit.siteId, auditId: audit.id }, 'could not store an audit report');
      return {
        ok: false,
        reason: 'report_not_stored',
        message: `its report could not be stored: ${(error as Error).message}`,
      };
    }
  }

  function store(audit: AuditRow, outcome: AuditOutcome): Promise<AuditRow | undefined> {
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

  async function regressionsOf(audit: AuditRow): Promise<JobEvent[]> {
    const recent = await repository.recentCompleted(audit.siteId, audit.formFactor, audit.id, REGRESSION_WINDOW);
    const regressions = detectRegressions(figuresOf(audit), recent.map(figuresOf), config.regressionMarginPercent);
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
    const audit = await repository.start(auditId, started);
    if (!audit) {
      // Not queued: it ended meanwhile (its row says how), or is gone.
      const row = await repository.findById(auditId);
      if (!row) return { events: [], outcome: { state: 'failed', reason: 'not-found', message: 'the audit is gone' } };
      return { events: [], outcome: auditOutcome(row) };
    }
    const runs = audit.runs;
    const target = await auditedAddress(network, audit.url);
    let outcome: AuditOutcome = !target.ok
      ? target
      : await runner.run(
          {
            url: audit.url,
            formFactor: audit.formFactor,
            runs,
            chromePath: config.chromePath,
            workDir: reports.workDirOf(audit.id),
            reportPath: reports.scratchPathOf(audit.id),
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
    // The audit is completed only once its report is stored, every byte of it.
    if (outcome.ok) outcome = await storeReport(audit, outcome);
    else rmSync(reports.scratchPathOf(audit.id), { force: true });
    const stored = await store(audit, outcome);
    // The site (and with it the audit) may have been removed while the audit ran.
    // A report that cannot be removed now (the store fails) is one the daily sweep removes later (removeOrphans).
    if (!stored || !outcome.ok)
      await reports
        .remove(audit.siteId, audit.id)
        .catch((error: unknown) => logger.warn({ err: error, auditId: audit.id }, 'could not remove an audit report'));
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
      return { events: await regressionsOf(stored), outcome: jobOutcome };
    }
    return {
      outcome: jobOutcome,
      events: [auditFailed(stored, outcome.reason, outcome.message)],
      interrupted: outcome.reason === 'interrupted',
    };
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

  // A cancelled audit (its worker killed if it ran) says `failed`, `interrupted`; its job says `cancelled`.
  // A cancel's write is made inside the job runner's transaction: at once on SQLite (`inHook`), on the job store's `tx` in a cluster.
  jobs.register('audit', {
    pool: { name: 'audits', concurrency: config.concurrency },
    exclusive: false,
    atShutdown: 'abort',
    cancelsWhileRunning: true,
    run: (job, signal) => execute(job.id, signal, job.startedAt ?? undefined),
    cancelQueued(job, message, tx) {
      if (tx) return repository.interrupt(job.id, clock.now(), message, tx).then(() => undefined);
      repository.inHook.interrupt(job.id, clock.now(), message);
    },
    recover: {
      async running(job) {
        const message = 'the daemon stopped while the audit ran';
        const audit = await repository.interrupt(job.id, clock.now(), message);
        if (audit) return { outcome: auditOutcome(audit), events: [auditFailed(audit, 'interrupted', message)] };
        // It had ended: the process stopped before its job row was written (nor its events logged).
        return { events: [], outcome: auditOutcome((await repository.findById(job.id))!), interrupted: false };
      },
    },
  });

  return { createAudit };
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
