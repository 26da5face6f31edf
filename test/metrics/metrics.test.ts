import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/metrics/metrics.js';
import { DEFAULT_PERFORMANCE_CONFIG } from '../../src/performance/performance.config.js';
import { createFakeClock } from '../../src/shared/clock.js';
import { createId } from '../../src/shared/ids.js';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text.js';
import { type TestApp, createTestApp, insertSiteRow } from '../support/test-app.js';

let t: TestApp | undefined;
let server: Server | undefined;
afterEach(async () => {
  await t?.services.uptime.stop();
  await t?.close();
  await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
  t = undefined;
  server = undefined;
});

async function loopbackSite(): Promise<string> {
  server = createServer((_, response) => response.end('<html>ok</html>'));
  await new Promise<void>((done) => server!.listen(0, '127.0.0.1', () => done()));
  const address = server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}

describe('GET /metrics', () => {
  it('serves the Prometheus text format, and its figures move with what the daemon does', async () => {
    const clock = createFakeClock(new Date('2026-03-02T10:00:00Z'));
    // No Chromium there: the audit fails at once, which is all the metrics need.
    t = createTestApp({
      clock,
      metrics: createMetrics(),
      config: { performance: { ...DEFAULT_PERFORMANCE_CONFIG, chromePath: '/nonexistent/chromium' } },
    });
    const scrape = async () => {
      const response = await t!.call('GET', '/metrics', { token: t!.readToken });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      return parsePrometheusText(response.text);
    };

    const before = await scrape();
    for (const [name, type] of [
      ['sitewarden_sites', 'gauge'],
      ['sitewarden_queue_depth', 'gauge'],
      ['sitewarden_uptime_probes_total', 'counter'],
      ['sitewarden_uptime_probe_duration_seconds', 'histogram'],
      ['sitewarden_jobs_total', 'counter'],
      ['sitewarden_job_duration_seconds', 'histogram'],
      ['sitewarden_http_request_duration_seconds', 'histogram'],
      ['sitewarden_auth_rate_limited_total', 'counter'],
      ['process_cpu_seconds_total', 'counter'],
      ['process_resident_memory_bytes', 'gauge'],
      ['nodejs_eventloop_lag_seconds', 'gauge'],
    ] as const) {
      expect(before.get(name)?.type, name).toBe(type);
    }
    for (const queue of ['site_tasks', 'uptime_probes', 'audits', 'backups'])
      expect(sampleValue(before, 'sitewarden_queue_depth', { queue })).toBe(0);
    expect(sampleValue(before, 'sitewarden_sites', { state: 'connected' })).toBe(0);

    // A monitored site answering on loopback, one that refuses connections, and a pending one.
    await t.services.uptime.start();
    const now = clock.now();
    const up = createId('site', now);
    const url = await loopbackSite();
    insertSiteRow(t, {
      id: up,
      url,
      restUrl: `${url}/wp-json/`,
      state: 'connected',
      createdAt: now,
      updatedAt: now,
      connectedAt: now,
    });
    t.services.lifecycle.connected({ id: up, url });
    await t.services.uptime.settled();
    const refusing = createId('site', now);
    insertSiteRow(t, {
      id: refusing,
      url: 'http://127.0.0.1:9',
      restUrl: 'http://127.0.0.1:9/wp-json/',
      state: 'connected',
      username: 'admin',
      credentialSealed: t.services.secrets.seal('xxxx xxxx xxxx xxxx xxxx xxxx'),
      createdAt: now,
      updatedAt: now,
      connectedAt: now,
    });
    insertSiteRow(t, {
      id: createId('site', now),
      url: 'http://127.0.0.1:9/pending',
      restUrl: 'http://127.0.0.1:9/pending/wp-json/',
      state: 'pending',
      createdAt: now,
      updatedAt: now,
    });

    clock.set(new Date(t.services.uptime.nextDueAt(up)!));
    expect(await t.services.uptime.runDue()).toBeGreaterThanOrEqual(1);
    await t.services.sync.syncNow(refusing);
    await t.services.backups.request(refusing);
    await t.services.backups.idle();
    await t.services.performance.requestAudit(refusing, { formFactor: 'mobile' });
    await t.services.performance.idle();
    await t.call('GET', '/api/sites', { token: t.readToken });
    await t.call('GET', '/api/sites/site_unknown', { token: t.readToken });
    await t.call('GET', '/api/sites/site_other_unknown', { token: t.readToken });
    await t.call('GET', '/api/no-such-route/42', { token: t.readToken });
    await t.call('GET', '/wp-login.php', { token: null });

    const after = await scrape();
    expect(sampleValue(after, 'sitewarden_sites', { state: 'connected' })).toBe(2);
    expect(sampleValue(after, 'sitewarden_sites', { state: 'pending' })).toBe(1);
    expect(sampleValue(after, 'sitewarden_uptime_probes_total', { outcome: 'up' })).toBe(1);
    expect(sampleValue(after, 'sitewarden_uptime_probe_duration_seconds_count', { outcome: 'up' })).toBe(1);
    expect(sampleValue(after, 'sitewarden_jobs_total', { kind: 'sync', outcome: 'failed' })).toBe(1);
    expect(sampleValue(after, 'sitewarden_jobs_total', { kind: 'backup', outcome: 'failed' })).toBe(1);
    expect(sampleValue(after, 'sitewarden_job_duration_seconds_count', { kind: 'backup' })).toBe(1);
    expect(sampleValue(after, 'sitewarden_job_duration_seconds_count', { kind: 'sync' })).toBe(1);
    expect(sampleValue(after, 'sitewarden_jobs_total', { kind: 'audit', outcome: 'failed' })).toBe(1);
    expect(sampleValue(after, 'sitewarden_job_duration_seconds_count', { kind: 'audit' })).toBe(1);
    // Route patterns, never raw paths: the two unknown ids share one series.
    expect(
      sampleValue(after, 'sitewarden_http_request_duration_seconds_count', {
        method: 'GET',
        route: '/api/sites',
        status: '2xx',
      }),
    ).toBe(1);
    expect(
      sampleValue(after, 'sitewarden_http_request_duration_seconds_count', {
        method: 'GET',
        route: '/api/sites/:id',
        status: '4xx',
      }),
    ).toBe(2);
    expect(
      sampleValue(after, 'sitewarden_http_request_duration_seconds_count', {
        method: 'GET',
        route: '/metrics',
        status: '2xx',
      }),
    ).toBe(1);
    expect(
      sampleValue(after, 'sitewarden_http_request_duration_seconds_count', {
        method: 'GET',
        route: 'unmatched',
        status: '4xx',
      }),
    ).toBe(2);
    const routes = new Set(
      after.get('sitewarden_http_request_duration_seconds')!.samples.map((sample) => sample.labels.route),
    );
    expect([...routes].some((route) => route?.includes('site_unknown'))).toBe(false);
    const labelValues = [...after.values()].flatMap((family) =>
      family.samples.flatMap((sample) => Object.values(sample.labels)),
    );
    expect(
      labelValues.filter((value) => value.includes(up) || value.includes(refusing) || value.includes('site_unknown')),
    ).toEqual([]);
  });

  it('needs an API token on the main listener, and is not there at all when it has its own', async () => {
    t = createTestApp({ metrics: createMetrics({ processMetrics: false }) });
    expect((await t.call('GET', '/metrics', { token: null })).status).toBe(401);
    expect((await t.call('GET', '/metrics', { token: 'swt_wrong' })).status).toBe(401);
    expect((await t.call('GET', '/metrics', { token: t.readToken })).status).toBe(200);
    await t.close();

    t = createTestApp({ metrics: createMetrics({ processMetrics: false }), app: { metricsOnOwnListener: true } });
    const answer = await t.call('GET', '/metrics', { token: t.readToken });
    expect(answer.status).toBe(404);
    expect(answer.json.type).toBe('/problems/not-found');
  });
});
