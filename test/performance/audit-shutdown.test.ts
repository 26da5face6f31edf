import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { AuditOutcome, AuditRunner } from '../../src/performance/audit-runner.js';
import { DEFAULT_PERFORMANCE_CONFIG } from '../../src/performance/performance.config.js';
import { reportStoreIn } from '../../src/performance/performance.reports.js';
import { createPerformanceRepository } from '../../src/performance/performance.repository.js';
import { createPerformanceService } from '../../src/performance/performance.service.js';
import { createId } from '../../src/shared/ids.js';
import { createFakeClock, createTestApp, insertSiteRow } from '../support/test-app.js';
import { jobRunnerOf } from '../support/job-runner-fixture.js';
import { loopbackNetwork } from '../support/network.js';

const dataDir = mkdtempSync(join(tmpdir(), 'sitewarden-audit-stop-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** What a stop of the daemon does to audits: the running one is killed and reported, the waiting one kept. */
describe('audits at shutdown', () => {
  it('fail the running audit as interrupted (logged as job.interrupted) and keep the waiting one queued', async () => {
    const clock = createFakeClock(new Date('2026-03-10T00:00:00Z'));
    const t = createTestApp({ clock, config: { dataDir } });
    // A runner whose audit only ends when it is killed, as a worker process does.
    let killed: ((outcome: AuditOutcome) => void) | undefined;
    const runner: AuditRunner = {
      run: () => new Promise<AuditOutcome>((resolve) => (killed = resolve)),
      killAll: () => killed?.({ ok: false, reason: 'worker_crashed', message: 'killed' }),
    };
    const repository = createPerformanceRepository(t.state);
    const performance = createPerformanceService({
      network: loopbackNetwork,
      repository,
      sitesRepository: t.services.sitesRepository,
      runner,
      reports: reportStoreIn(dataDir),
      clock,
      logger: t.logs.logger,
      jobs: jobRunnerOf(t),
      config: { ...DEFAULT_PERFORMANCE_CONFIG, concurrency: 1 },
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
    const running = await performance.requestAudit(site.id, { formFactor: 'mobile' });
    const waiting = await performance.requestAudit(site.id, { formFactor: 'desktop' });
    // Its worker started: the audit's row reads `running` a step before (the audit's address is checked in between).
    while (!killed) await new Promise((resolve) => setImmediate(resolve));
    expect((await repository.findById(running.id))?.status).toBe('running');

    await performance.stop();
    expect(await repository.findById(running.id)).toMatchObject({ status: 'failed', failureReason: 'interrupted' });
    expect(await repository.findById(waiting.id)).toMatchObject({ status: 'queued' });
    expect(t.logs.events('job.interrupted')).toEqual([
      expect.objectContaining({ kind: 'audit', jobId: running.id, siteId: site.id, action: 'failed' }),
    ]);
    await t.close();
  });
});
