import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PERFORMANCE_CONFIG } from '../../src/performance/performance.config.js';
import type { PerformanceConfig } from '../../src/performance/performance.service.js';
import { createId } from '../../src/shared/ids.js';
import { startFakeSite } from '../support/fake-wordpress/index.js';
import { buildAuditWorker } from '../support/performance-worker.js';
import { freePort } from '../support/served-app.js';
import { type TestApp, createTestApp, insertSiteRow } from '../support/test-app.js';
import { createTestSite, type TestSite } from '../support/wordpress/index.js';

/** Processes whose command line names `path` (Chromium carries its profile directory there). */
function processesNaming(path: string): string[] {
  try {
    return execFileSync('pgrep', ['-f', path], { encoding: 'utf8' }).split('\n').filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

async function waitFor<T>(read: () => T | undefined, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('Lighthouse audits of a real WordPress site in real Chromium', () => {
  let site: TestSite;
  let workerPath: string;
  const dataDirs: string[] = [];
  const apps: TestApp[] = [];

  function appWith(performance: Partial<PerformanceConfig> = {}): TestApp & { dataDir: string } {
    const dataDir = mkdtempSync(join(tmpdir(), 'sitewarden-perf-'));
    dataDirs.push(dataDir);
    const app = createTestApp({
      auditWorkerPath: workerPath,
      config: { dataDir, performance: { ...DEFAULT_PERFORMANCE_CONFIG, ...performance } },
    });
    apps.push(app);
    return Object.assign(app, { dataDir });
  }

  /** A site row pointing anywhere, for audits of pages that are not WordPress. */
  function addSiteAt(t: TestApp, url: string) {
    const now = new Date();
    return insertSiteRow(t, {
      id: createId('site', now),
      url,
      restUrl: `${url}/wp-json/`,
      state: 'connected',
      createdAt: now,
      updatedAt: now,
    });
  }

  beforeAll(async () => {
    [site, workerPath] = await Promise.all([createTestSite(), buildAuditWorker()]);
  });
  afterAll(async () => {
    for (const app of apps) {
      await app.services.performance.stop();
      await app.close();
    }
    await site?.stop();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  describe('a completed audit', () => {
    let t: TestApp & { dataDir: string };
    let siteId: string;
    let audit: { id: string };

    beforeAll(async () => {
      t = appWith();
      const connected = await t.call('POST', '/api/sites', {
        json: { url: site.url, username: site.admin.username, applicationPassword: site.admin.applicationPassword },
      });
      expect(connected.status, connected.text).toBe(201);
      siteId = connected.json.id;
      const queued = await t.call('POST', `/api/sites/${siteId}/performance`, { json: { formFactor: 'desktop' } });
      expect(queued.status, queued.text).toBe(202);
      expect(queued.json).toMatchObject({ status: 'queued', formFactor: 'desktop', url: site.url });
      audit = queued.json;
      await t.services.performance.idle();
    }, 120_000);

    it('completes with the four category scores in [0, 1], the key metrics and the versions', async () => {
      const { json } = await t.call('GET', `/api/sites/${siteId}/performance/${audit.id}`, { token: t.readToken });
      expect(json, JSON.stringify(json)).toMatchObject({
        status: 'completed',
        failure: null,
        versions: {
          lighthouse: expect.stringMatching(/^12\.8\./),
          chromium: expect.stringMatching(/^\d+\.\d+\.\d+\.\d+$/),
        },
      });
      for (const score of Object.values(json.scores)) {
        expect(score).toBeGreaterThanOrEqual(0);
        expect(score).toBeLessThanOrEqual(1);
      }
      expect(Object.keys(json.scores).sort()).toEqual(['accessibility', 'bestPractices', 'performance', 'seo']);
      for (const name of ['firstContentfulPaintMs', 'largestContentfulPaintMs', 'speedIndexMs', 'timeToFirstByteMs'])
        expect(json.metrics[name], name).toBeGreaterThan(0);
      for (const name of ['totalBlockingTimeMs', 'cumulativeLayoutShift'])
        expect(json.metrics[name], name).toBeGreaterThanOrEqual(0);
      expect(Date.parse(json.finishedAt)).toBeGreaterThanOrEqual(Date.parse(json.startedAt));
    });

    it('lists it as the latest desktop audit and in the history, with filters', async () => {
      const { json } = await t.call('GET', `/api/sites/${siteId}/performance`, { token: t.readToken });
      expect(json.latest.desktop.id).toBe(audit.id);
      expect(json.latest.mobile).toBeNull();
      expect(json.history.items.map((item: { id: string }) => item.id)).toEqual([audit.id]);
      expect((await t.call('GET', `/api/sites/${siteId}/performance?formFactor=mobile`)).json.history.items).toEqual(
        [],
      );
      expect(
        (
          await t.call(
            'GET',
            `/api/sites/${siteId}/performance?from=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`,
          )
        ).json.history.items,
      ).toEqual([]);
      expect(
        (
          await t.call(
            'GET',
            `/api/sites/${siteId}/performance?to=${encodeURIComponent(new Date().toISOString())}&limit=1`,
          )
        ).json.history,
      ).toEqual({ items: [expect.objectContaining({ id: audit.id })], nextCursor: null });
    });

    it('serves the full HTML report, gzip-encoded to clients that accept it', async () => {
      const plain = await t.call('GET', `/api/sites/${siteId}/performance/${audit.id}/report`, { token: t.readToken });
      expect(plain.status).toBe(200);
      expect(plain.headers.get('content-type')).toMatch(/^text\/html/);
      expect(plain.text).toMatch(/<!doctype html>/i);
      expect(plain.text).toContain('Lighthouse Report');
      expect(plain.text).toContain(site.url);
      const gzipped = await t.app.request(`/api/sites/${siteId}/performance/${audit.id}/report`, {
        headers: { authorization: `Bearer ${t.readToken}`, 'accept-encoding': 'gzip' },
      });
      expect(gzipped.headers.get('content-encoding')).toBe('gzip');
      expect(gunzipSync(Buffer.from(await gzipped.arrayBuffer())).toString('utf8')).toBe(plain.text);
    });

    it('keeps a few hundred bytes in SQLite and the compressed report on disk', async () => {
      const row = t.database.sqlite.prepare('select * from performance_audits where id = ?').get(audit.id) as Record<
        string,
        unknown
      >;
      expect(JSON.stringify(row).length).toBeLessThan(2048);
      const { json } = await t.call('GET', `/api/sites/${siteId}/performance/${audit.id}`);
      expect(json.report.bytes).toBeGreaterThan(10_000);
      expect(json.report.bytes).toBeLessThan(400_000);
      expect(processesNaming(join(t.dataDir, 'performance/work'))).toEqual([]);
    });
  });

  it('runs a scheduled audit of a connected site to completion when its slot comes', async () => {
    const t = appWith();
    const connected = await t.call('POST', '/api/sites', {
      json: { url: site.url, username: site.admin.username, applicationPassword: site.admin.applicationPassword },
    });
    expect(connected.status, connected.text).toBe(201);
    const settings = await t.call('PATCH', `/api/sites/${connected.json.id}`, {
      json: { performance: { formFactors: ['mobile'] } },
    });
    expect(settings.status, settings.text).toBe(200);
    // A site never audited is due at once; the cron tick calls exactly this.
    expect(await t.services.performance.enqueueDue()).toBe(1);
    expect(await t.services.performance.enqueueDue()).toBe(0);
    await t.services.performance.idle();
    const { json } = await t.call('GET', `/api/sites/${connected.json.id}/performance`);
    expect(json.latest.mobile, JSON.stringify(json)).toMatchObject({
      status: 'completed',
      trigger: 'scheduled',
      formFactor: 'mobile',
    });
    expect(json.latest.mobile.scores.performance).toBeGreaterThan(0);
  }, 120_000);

  it('fails an audit of an unreachable address with page_unreachable', async () => {
    const t = appWith();
    const unreachable = addSiteAt(t, `http://127.0.0.1:${await freePort()}`);
    const queued = await t.services.performance.requestAudit(unreachable.id, { formFactor: 'mobile' });
    await t.services.performance.idle();
    expect(await t.services.performance.get(unreachable.id, queued.id)).toMatchObject({
      status: 'failed',
      failureReason: 'page_unreachable',
      reportBytes: null,
    });
    expect(t.logs.events('performance.audit_failed')).toEqual([
      expect.objectContaining({ auditId: queued.id, reason: 'page_unreachable', siteId: unreachable.id }),
    ]);
  });

  it('fails with chrome_unavailable and a clear message when Chromium is missing, and keeps working', async () => {
    const t = appWith({ chromePath: '/nonexistent/chromium' });
    const target = addSiteAt(t, site.url);
    const queued = await t.call('POST', `/api/sites/${target.id}/performance`);
    await t.services.performance.idle();
    const { json } = await t.call('GET', `/api/sites/${target.id}/performance/${queued.json.id}`);
    expect(json).toMatchObject({
      status: 'failed',
      failure: { reason: 'chrome_unavailable', message: expect.stringContaining('/nonexistent/chromium') },
    });
    expect(json.failure.message).toContain('CHROME_PATH');
    expect((await t.call('GET', '/api/health', { token: null })).status).toBe(200);
  });

  it('kills an audit stuck on a page that never finishes at its time limit, with its Chromium', async () => {
    // An endless script in the document: the renderer never answers Lighthouse again.
    const stuck = await startFakeSite((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><html><body><h1>Stuck</h1><script>for (;;) {}</script></body></html>');
    });
    try {
      const t = appWith({ timeoutMs: 8_000 });
      const target = addSiteAt(t, stuck.url);
      const started = Date.now();
      const queued = await t.services.performance.requestAudit(target.id, { formFactor: 'mobile' });
      const workDir = join(t.dataDir, 'performance/work', queued.id);
      // Chromium is really running for this audit before the limit strikes.
      await waitFor(() => (processesNaming(workDir).length > 0 ? true : undefined), 8_000);
      await t.services.performance.idle();
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(await t.services.performance.get(target.id, queued.id)).toMatchObject({
        status: 'failed',
        failureReason: 'timeout',
      });
      expect(processesNaming(workDir)).toEqual([]);
      expect(processesNaming(queued.id)).toEqual([]);
    } finally {
      await stuck.close();
    }
  });
});
