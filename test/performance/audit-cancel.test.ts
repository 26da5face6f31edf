import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { AuditRequest } from '../../src/performance/audit-protocol.js';
import { createAuditRunner, type AuditOutcome, type AuditRunner } from '../../src/performance/audit-runner.js';
import { DEFAULT_PERFORMANCE_CONFIG } from '../../src/performance/performance.config.js';
import { reportStoreIn } from '../../src/performance/performance.reports.js';
import { createPerformanceRepository } from '../../src/performance/performance.repository.js';
import { createPerformanceService } from '../../src/performance/performance.service.js';
import { createId } from '../../src/shared/ids.js';
import { createLogger } from '../../src/shared/logger.js';
import { createFakeClock, createTestApp, insertSiteRow } from '../support/test-app.js';
import { jobRunnerOf } from '../support/job-runner-fixture.js';
import { loopbackNetwork } from '../support/network.js';

const dataDir = mkdtempSync(join(tmpdir(), 'sitewarden-audit-cancel-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** A running audit cancelled through the job runner: its worker is killed, the audit fails, the job is cancelled. */
describe('cancelling a running audit', () => {
  it('stops it: the audit says failed (interrupted), its job cancelled, logged as job.cancelled only', async () => {
    const clock = createFakeClock(new Date('2026-11-23T10:00:00Z'));
    const t = createTestApp({ clock, config: { dataDir } });
    // A runner whose audit only ends when its signal kills it, as a worker process does.
    let started = false;
    const runner: AuditRunner = {
      run: (_request, _timeoutMs, signal) =>
        new Promise<AuditOutcome>((resolve) => {
          started = true;
          signal?.addEventListener('abort', () => resolve({ ok: false, reason: 'interrupted', message: 'killed' }));
        }),
      killAll: () => undefined,
    };
    const repository = createPerformanceRepository(t.state);
    const jobs = jobRunnerOf(t);
    const performance = createPerformanceService({
      network: loopbackNetwork,
      repository,
      sitesRepository: t.services.sitesRepository,
      runner,
      reports: reportStoreIn(dataDir),
      clock,
      logger: t.logs.logger,
      config: DEFAULT_PERFORMANCE_CONFIG,
      jobs,
    });
    const now = clock.now();
    const site = insertSiteRow(t, {
      id: createId('site', now),
      url: 'http://127.0.0.1:9/audited',
      restUrl: 'http://127.0.0.1:9/audited/wp-json/',
      state: 'connected',
      createdAt: now,
      updatedAt: now,
    });
    const audit = await performance.requestAudit(site.id, { formFactor: 'mobile' });
    while (!started) await new Promise((resolve) => setImmediate(resolve));

    expect((await jobs.cancel(audit.id)).state).toBe('running');
    await performance.idle();
    expect(await repository.findById(audit.id)).toMatchObject({
      status: 'failed',
      failureReason: 'interrupted',
      failureMessage: 'cancelled on request',
    });
    expect(await jobs.get(audit.id)).toMatchObject({ state: 'cancelled', reason: 'cancelled' });
    expect(t.logs.events('job.cancelled')).toEqual([
      expect.objectContaining({ kind: 'audit', jobId: audit.id, siteId: site.id, state: 'running' }),
    ]);
    expect(t.logs.events('performance.audit_failed')).toEqual([]);
    expect(t.logs.events('job.interrupted')).toEqual([]);
    await t.close();
  });

  it('kills the worker process of the audit whose signal aborts, at once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sitewarden-audit-kill-'));
    try {
      // A stand-in worker that never answers.
      const workerPath = join(dir, 'worker.mjs');
      writeFileSync(workerPath, 'setInterval(() => undefined, 1000);\n');
      const runner = createAuditRunner({ workerPath, logger: createLogger({ level: 'silent' }) });
      const request = {
        url: 'http://127.0.0.1:9/',
        formFactor: 'mobile',
        runs: 1,
        chromePath: '/nonexistent',
        workDir: join(dir, 'work'),
        reportPath: join(dir, 'report.html.gz'),
        maxWaitForLoadMs: 1000,
        blockThirdParty: true,
      } as unknown as AuditRequest;
      const controller = new AbortController();
      const outcome = runner.run(request, 60_000, controller.signal);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const stopped = performance.now();
      controller.abort();
      expect(await outcome).toMatchObject({ ok: false, reason: 'interrupted' });
      expect(performance.now() - stopped).toBeLessThan(5_000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
