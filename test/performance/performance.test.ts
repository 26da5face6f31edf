import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditRequest, AuditSummary } from '../../src/performance/audit-protocol.js';
import { createAuditRunner, type AuditOutcome, type AuditRunner } from '../../src/performance/audit-runner.js';
import { createLogger } from '../../src/shared/logger.js';
import { DEFAULT_PERFORMANCE_CONFIG } from '../../src/performance/performance.config.js';
import { createReportStore, reportStoreIn } from '../../src/performance/performance.reports.js';
import { createDirectoryBackend } from '../../src/blobs/blob-backend.js';
import { createPerformanceRepository } from '../../src/performance/performance.repository.js';
import { createPerformanceService } from '../../src/performance/performance.service.js';
import { detectRegressions, type AuditFigures } from '../../src/performance/regression.js';
import { isDue, latestSlot, siteOffsetMs } from '../../src/jobs/spread.js';
import { createId } from '../../src/shared/ids.js';
import { type TestApp, createFakeClock, createTestApp, insertSiteRow } from '../support/test-app.js';
import { insertJobRowOf } from '../support/job-rows.js';
import { jobRunnerOf } from '../support/job-runner-fixture.js';
import { loopbackNetwork } from '../support/network.js';

const DAY = 86_400_000;

function figures(performance: number, lcp: number, tbt = 0, cls = 0, fcp = 800): AuditFigures {
  return {
    scores: { performance },
    metrics: {
      firstContentfulPaintMs: fcp,
      largestContentfulPaintMs: lcp,
      totalBlockingTimeMs: tbt,
      cumulativeLayoutShift: cls,
    },
  };
}

function summary(performance: number, lcp: number): AuditSummary {
  return {
    lighthouseVersion: '12.8.2',
    chromeVersion: '156.0.0.1',
    scores: { performance, accessibility: 0.9, bestPractices: 1, seo: 0.8 },
    metrics: {
      firstContentfulPaintMs: 800,
      largestContentfulPaintMs: lcp,
      totalBlockingTimeMs: 10,
      cumulativeLayoutShift: 0,
      speedIndexMs: 900,
      timeToFirstByteMs: 20,
    },
    reportBytes: 0,
  };
}

describe('regression detection', () => {
  const history = [figures(0.9, 2000), figures(0.92, 2100), figures(0.88, 1900), figures(0.91, 2050)];

  it('reports a performance score and an LCP worse than the recent median by more than the margin, with before and after', () => {
    expect(detectRegressions(figures(0.7, 3000), history, 10)).toEqual([
      { measure: 'performance', before: 0.905, after: 0.7 },
      { measure: 'largestContentfulPaintMs', before: 2025, after: 3000 },
    ]);
  });

  it('stays quiet within the margin, on improvements, and without enough history', () => {
    expect(detectRegressions(figures(0.85, 2200), history, 10)).toEqual([]);
    expect(detectRegressions(figures(1, 1000), history, 10)).toEqual([]);
    expect(detectRegressions(figures(0.1, 9000), history.slice(0, 2), 10)).toEqual([]);
  });

  it('ignores changes below the noise floor even when the percentage is large', () => {
    const quiet = [figures(0.9, 2000, 0, 0.001), figures(0.9, 2000, 0, 0.001), figures(0.9, 2000, 0, 0.001)];
    expect(detectRegressions(figures(0.9, 2000, 30, 0.005), quiet, 10)).toEqual([]);
    expect(detectRegressions(figures(0.9, 2000, 400, 0.25), quiet, 10).map((regression) => regression.measure)).toEqual(
      ['totalBlockingTimeMs', 'cumulativeLayoutShift'],
    );
  });
});

describe('the audit schedule', () => {
  it('gives every site a fixed minute of the day and spreads sites over it', () => {
    const offsets = Array.from({ length: 200 }, (_, i) => siteOffsetMs(`site_${i}`, DAY));
    expect(offsets.every((offset) => offset >= 0 && offset < DAY && offset % 60_000 === 0)).toBe(true);
    expect(siteOffsetMs('site_7', DAY)).toBe(siteOffsetMs('site_7', DAY));
    const hours = new Set(offsets.map((offset) => Math.floor(offset / 3_600_000)));
    expect(hours.size).toBeGreaterThan(18);
  });

  it('is due once per slot', () => {
    const now = new Date('2026-03-10T12:00:00Z');
    const slot = latestSlot('site_a', DAY, now);
    expect(slot.getTime()).toBeLessThanOrEqual(now.getTime());
    expect(now.getTime() - slot.getTime()).toBeLessThan(DAY);
    expect(isDue('site_a', DAY, null, now)).toBe(true);
    expect(isDue('site_a', DAY, slot, now)).toBe(false);
    expect(isDue('site_a', DAY, new Date(slot.getTime() - 1), now)).toBe(true);
    expect(isDue('site_a', DAY, slot, new Date(slot.getTime() + DAY))).toBe(true);
  });
});

/** A runner that answers from a script instead of starting Lighthouse. */
function scriptedRunner(outcomes: AuditOutcome[]) {
  const requests: AuditRequest[] = [];
  const runner: AuditRunner = {
    async run(request) {
      requests.push(request);
      const outcome = outcomes.shift() ?? { ok: false, reason: 'lighthouse_error', message: 'no scripted outcome' };
      if (outcome.ok) {
        mkdirSync(dirname(request.reportPath), { recursive: true });
        const report = gzipSync('<!doctype html><html><title>Lighthouse Report</title></html>');
        writeFileSync(request.reportPath, report);
        return { ok: true, summary: { ...outcome.summary, reportBytes: report.length } };
      }
      return outcome;
    },
    killAll: () => undefined,
  };
  return { runner, requests };
}

describe('performance audits without a browser', () => {
  let t: TestApp;
  let dataDir: string;
  const clock = createFakeClock(new Date('2026-03-10T00:00:00Z'));

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'sitewarden-perf-unit-'));
    t = createTestApp({ clock, config: { dataDir } });
  });
  afterEach(async () => {
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  function addSite(state: 'connected' | 'pending' = 'connected', url = 'http://127.0.0.1:9/') {
    const now = clock.now();
    return insertSiteRow(t, {
      id: createId('site', now),
      url: `${url}${Math.random().toString(36).slice(2)}`,
      restUrl: `${url}wp-json/`,
      state,
      createdAt: now,
      updatedAt: now,
    });
  }

  function serviceWith(runner: AuditRunner, overrides: Partial<typeof DEFAULT_PERFORMANCE_CONFIG> = {}) {
    return createPerformanceService({
      network: loopbackNetwork,
      repository: createPerformanceRepository(t.state),
      sitesRepository: t.services.sitesRepository,
      runner,
      reports: reportStoreIn(dataDir),
      clock,
      logger: t.logs.logger,
      jobs: jobRunnerOf(t),
      config: { ...DEFAULT_PERFORMANCE_CONFIG, ...overrides },
    });
  }

  it('the scheduler enqueues each connected site once per slot, both form factors by default', async () => {
    const { runner, requests } = scriptedRunner(
      Array.from({ length: 10 }, () => ({ ok: true, summary: summary(0.9, 2000) }) as AuditOutcome),
    );
    const performance = serviceWith(runner);
    const site = addSite();
    addSite('pending');
    const quiet = addSite();
    await performance.updateSettings(quiet.id, { enabled: false });

    expect(await performance.enqueueDue()).toBe(2);
    expect(await performance.enqueueDue()).toBe(0);
    await performance.idle();
    expect(requests.map((request) => request.formFactor).sort()).toEqual(['desktop', 'mobile']);
    expect(requests.every((request) => request.url === site.url)).toBe(true);
    expect((await performance.history(site.id, { limit: 10 })).map((audit) => [audit.trigger, audit.status])).toEqual([
      ['scheduled', 'completed'],
      ['scheduled', 'completed'],
    ]);

    // Ticking through the next day enqueues the site exactly once more, at its slot.
    let nextDay = 0;
    for (let hour = 0; hour < 24; hour++) {
      clock.advance(3_600_000);
      nextDay += await performance.enqueueDue();
    }
    expect(nextDay).toBe(2);
    await performance.idle();

    await performance.updateSettings(site.id, { formFactors: ['desktop'], runs: 3 });
    clock.advance(DAY);
    expect(await performance.enqueueDue()).toBe(1);
    await performance.idle();
    expect(requests.at(-1)).toMatchObject({ formFactor: 'desktop', runs: 3 });

    // A site's own interval: every six hours, four times a day, at its own slots.
    expect(await performance.updateSettings(site.id, { intervalHours: 6 })).toMatchObject({
      intervalHours: 6,
      formFactors: ['desktop'],
      runs: 3,
    });
    await performance.enqueueDue(); // the current six-hour slot, if the daily audit came before it
    await performance.idle();
    let sixHourly = 0;
    for (let hour = 0; hour < 24; hour++) {
      clock.advance(3_600_000);
      sixHourly += await performance.enqueueDue();
      await performance.idle();
    }
    expect(sixHourly).toBe(4);
  });

  it('logs performance.regressed with before and after when an audit is worse than the recent median', async () => {
    const outcomes: AuditOutcome[] = [0.9, 0.91, 0.89, 0.9, 0.6].map((score) => ({
      ok: true,
      summary: summary(score, score > 0.8 ? 2000 : 4000),
    }));
    const performance = serviceWith(scriptedRunner(outcomes).runner);
    const site = addSite();
    for (let i = 0; i < 5; i++) {
      await performance.requestAudit(site.id, { formFactor: 'mobile' });
      await performance.idle();
      clock.advance(60_000);
    }
    const events = t.logs.events('performance.regressed');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      level: 'warn',
      siteId: site.id,
      formFactor: 'mobile',
      regressions: [
        { measure: 'performance', before: 0.9, after: 0.6 },
        { measure: 'largestContentfulPaintMs', before: 2000, after: 4000 },
      ],
    });
  });

  it('fails audits that were running at a crash as interrupted and queues the waiting ones again', async () => {
    const site = addSite();
    const repository = createPerformanceRepository(t.state);
    const base = {
      siteId: site.id,
      url: site.url,
      formFactor: 'mobile' as const,
      trigger: 'scheduled' as const,
      runs: 1,
      queuedAt: clock.now(),
    };
    const running = await repository.insert({
      ...base,
      id: createId('perf', clock.now()),
      status: 'running',
      startedAt: clock.now(),
    });
    const queued = await repository.insert({
      ...base,
      id: createId('perf', clock.now()),
      formFactor: 'desktop',
      status: 'queued',
    });
    // Their job rows, as the daemon that stopped left them.
    for (const row of [running, queued]) insertJobRowOf(t.database.db, 'audit', row);

    const { runner, requests } = scriptedRunner([{ ok: true, summary: summary(0.9, 2000) }]);
    const performance = serviceWith(runner);
    expect(await performance.recover()).toEqual({ requeued: 1, interrupted: 1 });
    await performance.idle();
    expect(await repository.findById(running.id)).toMatchObject({ status: 'failed', failureReason: 'interrupted' });
    expect(await repository.findById(queued.id)).toMatchObject({ status: 'completed' });
    expect(requests).toHaveLength(1);
    expect(t.logs.events('performance.audit_failed')).toEqual([
      expect.objectContaining({ auditId: running.id, reason: 'interrupted' }),
    ]);
    expect(t.logs.events('job.interrupted')).toEqual([
      expect.objectContaining({ kind: 'audit', jobId: running.id, siteId: site.id, action: 'failed' }),
      expect.objectContaining({ kind: 'audit', jobId: queued.id, siteId: site.id, action: 'requeued' }),
    ]);
  });

  it('sweeps what a killed daemon left: work directories and reports of audits that did not complete', async () => {
    const site = addSite();
    const repository = createPerformanceRepository(t.state);
    const reports = reportStoreIn(dataDir);
    const base = {
      siteId: site.id,
      url: site.url,
      formFactor: 'mobile' as const,
      trigger: 'scheduled' as const,
      runs: 1,
      queuedAt: clock.now(),
    };
    const kept = await repository.insert({
      ...base,
      id: createId('perf', clock.now()),
      status: 'completed',
      reportBytes: 3,
      finishedAt: clock.now(),
    });
    const interrupted = await repository.insert({
      ...base,
      id: createId('perf', clock.now()),
      status: 'running',
      startedAt: clock.now(),
    });
    insertJobRowOf(t.database.db, 'audit', interrupted);
    const reportPath = (id: string) => join(dataDir, 'performance/reports', site.id, `${id}.html.gz`);
    for (const [path, body] of [
      [reportPath(kept.id), 'kept'],
      [reportPath(interrupted.id), 'written after the daemon died'],
      [`${reportPath(interrupted.id)}.partial`, 'half'],
      [`${reports.scratchPathOf(interrupted.id)}`, 'its report, not yet stored'],
      [join(reports.workDirOf(interrupted.id), 'profile-0', 'Default', 'Cookies'), 'profile'],
    ] as const) {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, body);
    }

    const performance = serviceWith(scriptedRunner([]).runner);
    await performance.recover();
    expect(existsSync(dirname(reports.workDirOf(interrupted.id)))).toBe(false);
    expect(await performance.cleanupReports()).toBe(2);
    expect(readdirSync(dirname(reportPath(kept.id)))).toEqual([`${kept.id}.html.gz`]);
    expect(await reports.read(site.id, kept.id)).toEqual(Buffer.from('kept'));
  });

  it(
    'kills the audit processes a killed daemon left running, each leading its own group, and only those',
    { timeout: 20_000 },
    async () => {
      const reports = reportStoreIn(dataDir);
      const profile = join(reports.workDirOf(createId('perf', clock.now())), 'profile-0');
      mkdirSync(profile, { recursive: true });
      // Stand-ins for a left Chrome (its profile on its command line, a group of its own, as chrome-launcher starts it)
      // and for another program of the machine's.
      const stayAlive = 'setInterval(() => {}, 1000)';
      const leftover = spawn(process.execPath, ['-e', stayAlive, '--', `--user-data-dir=${profile}`], {
        detached: true,
        stdio: 'ignore',
      });
      const other = spawn(process.execPath, ['-e', stayAlive, '--', `--user-data-dir=${join(dataDir, 'elsewhere')}`], {
        stdio: 'ignore',
      });
      const exited = (child: ChildProcess) =>
        new Promise<NodeJS.Signals | null | 'still running'>((resolve) => {
          const timer = setTimeout(() => resolve('still running'), 10_000);
          child.once('exit', (_code, signal) => {
            clearTimeout(timer);
            resolve(signal);
          });
        });
      const leftoverExit = exited(leftover);
      try {
        await new Promise((resolve) => setTimeout(resolve, 200));
        await serviceWith(scriptedRunner([]).runner).recover();
        expect(await leftoverExit).toBe('SIGKILL');
        expect(other.exitCode).toBeNull();
        expect(other.signalCode).toBeNull();
        expect(t.logs.records()).toContainEqual(
          expect.objectContaining({ msg: 'killed audit processes a stopped daemon left running', processes: 1 }),
        );
      } finally {
        leftover.kill('SIGKILL');
        other.kill('SIGKILL');
      }
    },
  );

  it('removes reports past their retention but keeps the scores', async () => {
    const performance = serviceWith(scriptedRunner([{ ok: true, summary: summary(0.9, 2000) }]).runner, {
      reportRetentionDays: 30,
    });
    const site = addSite();
    const audit = await performance.requestAudit(site.id, {});
    await performance.idle();
    expect((await performance.report(site.id, audit.id)).length).toBeGreaterThan(0);
    clock.advance(29 * DAY);
    expect(await performance.cleanupReports()).toBe(0);
    clock.advance(2 * DAY);
    expect(await performance.cleanupReports()).toBe(1);
    expect(await performance.get(site.id, audit.id)).toMatchObject({
      status: 'completed',
      scorePerformance: 0.9,
      reportBytes: null,
    });
    await expect(performance.report(site.id, audit.id)).rejects.toMatchObject({
      problem: { name: 'performance-report-not-found' },
    });
  });

  it('fails an audit whose report cannot be stored, and keeps no score of it', async () => {
    // The reports' folder is a file: every write of a report fails, as on a full or read-only disk.
    const blocked = join(dataDir, 'reports-on-a-file');
    writeFileSync(blocked, '');
    const performance = createPerformanceService({
      network: loopbackNetwork,
      repository: createPerformanceRepository(t.state),
      sitesRepository: t.services.sitesRepository,
      runner: scriptedRunner([{ ok: true, summary: summary(0.9, 2000) }]).runner,
      reports: createReportStore({ blobs: createDirectoryBackend(blocked), workRoot: join(dataDir, 'work') }),
      clock,
      logger: t.logs.logger,
      jobs: jobRunnerOf(t),
      config: DEFAULT_PERFORMANCE_CONFIG,
    });
    const site = addSite();
    const audit = await performance.requestAudit(site.id, {});
    await performance.idle();
    expect(await performance.get(site.id, audit.id)).toMatchObject({
      status: 'failed',
      scorePerformance: null,
      reportBytes: null,
      failureReason: 'report_not_stored',
      failureMessage: expect.stringContaining('its report could not be stored'),
    });
    expect(t.logs.events('performance.audit_failed')).toEqual([
      expect.objectContaining({ auditId: audit.id, reason: 'report_not_stored' }),
    ]);
    // The worker's scratch copy does not outlive the audit.
    expect(readdirSync(join(dataDir, 'work'))).toEqual([]);
  });

  it('returns the waiting audit instead of queueing a second one of the same form factor', async () => {
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const runner: AuditRunner = {
      run: async () => (await gate, { ok: false, reason: 'page_error', message: 'NO_FCP' }),
      killAll: () => undefined,
    };
    const performance = serviceWith(runner);
    const site = addSite();
    const first = await performance.requestAudit(site.id, { formFactor: 'mobile' });
    expect((await performance.requestAudit(site.id, { formFactor: 'mobile' })).id).toBe(first.id);
    // Asked for at once (a scheduled tick beside a request): one audit, written with one job.
    const together = await Promise.all(
      [1, 2, 3].map(() => performance.requestAudit(site.id, { formFactor: 'desktop' })),
    );
    expect(new Set(together.map((audit) => audit.id)).size).toBe(1);
    expect(together[0]!.id).not.toBe(first.id);
    const jobsOfSite = t.database.sqlite.prepare('select count(*) from jobs where site_id = ?').pluck();
    expect(jobsOfSite.get(site.id)).toBe(2);
    open();
    await performance.idle();
    expect((await performance.requestAudit(site.id, { formFactor: 'mobile' })).id).not.toBe(first.id);
    await performance.idle();
  });

  it('serves settings, refuses unknown sites and audits, and has no report for a failed audit', async () => {
    const site = addSite();
    const settings = async () => (await t.call('GET', `/api/sites/${site.id}/settings`, { token: t.readToken })).json;
    const patch = (performance: unknown, extra: Record<string, unknown> = {}) =>
      t.call('PATCH', `/api/sites/${site.id}`, { json: { performance, ...extra } });
    expect((await settings()).performance).toEqual({
      enabled: true,
      formFactors: ['mobile', 'desktop'],
      runs: 1,
      intervalHours: 24,
    });
    expect((await patch({ intervalHours: 6 })).json.performance).toMatchObject({ intervalHours: 6 });
    expect((await patch({ intervalHours: null })).json.performance).toMatchObject({ intervalHours: 24 });
    expect((await patch({ intervalHours: 0 })).status).toBe(400);
    // A valid section beside an invalid one: nothing at all is written.
    const before = await settings();
    const mixed = await patch({ runs: 0 }, { monitoring: { intervalSeconds: 300 } });
    expect(mixed.status).toBe(400);
    expect(await settings()).toEqual(before);
    const patched = await t.call('PATCH', `/api/sites/${site.id}`, {
      json: { performance: { formFactors: ['desktop'], runs: 3 } },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.json.performance).toEqual({ enabled: true, formFactors: ['desktop'], runs: 3, intervalHours: 24 });
    expect((await patch({ runs: 0, formFactors: ['tablet'] })).json.errors).toHaveLength(2);
    expect(
      (await t.call('PATCH', `/api/sites/${site.id}`, { json: { performance: { runs: 2 } }, token: t.readToken }))
        .status,
    ).toBe(403);

    expect((await t.call('GET', '/api/sites/site_01jc0z6x8m3yq4x0h7a9b2c3d4/performance')).json.type).toBe(
      '/problems/site-not-found',
    );
    expect((await t.call('POST', '/api/sites/site_01jc0z6x8m3yq4x0h7a9b2c3d4/performance')).status).toBe(404);
    expect((await t.call('GET', `/api/sites/${site.id}/performance/perf_01jc0z6x8m3yq4x0h7a9b2c3d4`)).json.type).toBe(
      '/problems/performance-audit-not-found',
    );
    expect((await t.call('GET', `/api/sites/${site.id}/performance/nonsense`)).status).toBe(400);

    // Running from src/, the test app has no compiled audit worker: the audit fails, saying so.
    const queued = await t.call('POST', `/api/sites/${site.id}/performance`, { form: { formFactor: 'desktop' } });
    expect(queued.status, queued.text).toBe(202);
    expect(queued.json).toMatchObject({
      status: 'queued',
      formFactor: 'desktop',
      runs: 3,
      trigger: 'manual',
      scores: null,
      report: null,
    });
    expect(queued.headers.get('location')).toBe(`/api/sites/${site.id}/performance/${queued.json.id}`);
    await t.services.performance.idle();
    const failed = await t.call('GET', `/api/sites/${site.id}/performance/${queued.json.id}`, { token: t.readToken });
    expect(failed.json).toMatchObject({
      status: 'failed',
      failure: { reason: 'worker_crashed', message: expect.stringContaining('npm run build') },
    });
    const report = await t.call('GET', `/api/sites/${site.id}/performance/${queued.json.id}/report`);
    expect(report.status).toBe(404);
    expect(report.json.type).toBe('/problems/performance-report-not-found');
  });
});

describe('the audit runner', () => {
  it('runs the worker, and what it starts (as Chromium), at the configured lower priority', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sitewarden-nice-'));
    try {
      // A stand-in worker: reports its own nice value and that of a process it starts, read from /proc.
      const workerPath = join(dir, 'worker.mjs');
      writeFileSync(
        workerPath,
        [
          "import { execFileSync } from 'node:child_process';",
          "import { getPriority } from 'node:os';",
          'for await (const chunk of process.stdin) void chunk;',
          "const stat = execFileSync('cat', ['/proc/self/stat'], { encoding: 'utf8' });",
          "const childNice = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);",
          "process.stdout.write(JSON.stringify({ type: 'failed', reason: 'lighthouse_error', message: `worker ${getPriority()} child ${childNice}` }) + '\\n');",
        ].join('\n'),
      );
      const runner = createAuditRunner({ workerPath, logger: createLogger({ level: 'silent' }), nice: 7 });
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
      expect(await runner.run(request, 10_000)).toEqual({
        ok: false,
        reason: 'lighthouse_error',
        message: 'worker 7 child 7',
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
