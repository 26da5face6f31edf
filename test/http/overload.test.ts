import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { createOverloadGuard, sampleEventLoopLag, type LagSource } from '../../src/http/overload.js';
import { createErrorHandler } from '../../src/http/problem.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { createLogger } from '../../src/shared/logger.js';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { signIn } from '../dashboard/signed-in.js';

/** A lag source the test sets. */
function fakeLag(initial = 0): LagSource & { set(ms: number): void } {
  let lag = initial;
  return { lagMs: () => lag, set: (ms) => (lag = ms) };
}

describe('the overload guard (unit, an injected lag source)', () => {
  function guarded(lag: LagSource, boundMs = 500) {
    let refused = 0;
    const guard = createOverloadGuard({ boundMs, lag, onRefused: () => refused++ });
    const app = new Hono();
    app.use('*', guard.middleware());
    for (const path of ['/api/sites', '/', '/healthz', '/readyz', '/metrics', '/api/health'])
      app.get(path, (c) => c.text('served'));
    app.onError(createErrorHandler(createLogger({ level: 'silent' })));
    return { app, guard, refused: () => refused };
  }

  it('serves while the lag is within the bound', async () => {
    const lag = fakeLag(500);
    const { app, guard } = guarded(lag);
    expect((await app.request('/api/sites')).status).toBe(200);
    expect(guard.state()).toEqual({ lagMs: 500, overloaded: false });
  });

  it('past the bound answers 503 overloaded, a problem document with Retry-After, but health, readiness and metrics', async () => {
    const lag = fakeLag(2_300);
    const { app, refused } = guarded(lag);
    for (const path of ['/api/sites', '/']) {
      const response = await app.request(path);
      expect(response.status, path).toBe(503);
      expect(response.headers.get('content-type')).toBe('application/problem+json');
      expect(response.headers.get('retry-after')).toBe('3');
      const body = (await response.json()) as Record<string, unknown>;
      expect(body).toMatchObject({
        type: '/problems/overloaded',
        status: 503,
        title: 'The daemon is overloaded',
        retryAfterSeconds: 3,
        instance: path,
      });
      expect(body.detail).toMatch(/lags 2300 ms, more than 500 ms/);
    }
    expect(refused()).toBe(2);
    for (const path of ['/healthz', '/readyz', '/metrics', '/api/health'])
      expect((await app.request(path)).status, path).toBe(200);

    // Retry-After follows the lag, within 1–30 s; the guard lets requests through again once it is back under.
    lag.set(501);
    expect((await app.request('/api/sites')).headers.get('retry-after')).toBe('1');
    lag.set(120_000);
    expect((await app.request('/api/sites')).headers.get('retry-after')).toBe('30');
    lag.set(10);
    expect((await app.request('/api/sites')).status).toBe(200);
  });
});

describe('the event-loop lag sampler', () => {
  it('sees a blocked event loop, even before its timer could fire', async () => {
    const sampler = sampleEventLoopLag({ intervalMs: 20 });
    try {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const blockedUntil = performance.now() + 300;
      while (performance.now() < blockedUntil) {
        // a synchronous stretch, like a big page rendered in one go
      }
      // Read before the timer fires: the overdue tick counts.
      expect(sampler.lagMs()).toBeGreaterThanOrEqual(250);
      // The sampler's tick, due long ago, fires before this timeout: it recorded the block.
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(sampler.lagMs()).toBeGreaterThanOrEqual(250);
      // Once the loop is free again the lag comes back down (the next ticks are on time).
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(sampler.lagMs()).toBeLessThan(250);
    } finally {
      sampler.stop();
    }
  });
});

describe('an overloaded daemon', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('sheds dashboard and API requests, keeps answering health, readiness and metrics, and counts the refusals', async () => {
    const lag = fakeLag(0);
    const metrics = createMetrics({ processMetrics: false });
    t = createTestApp({ metrics, app: { overload: { boundMs: 500, lag } } });
    const user = await signIn(t, 'alice');

    expect((await t.call('GET', '/api/sites')).status).toBe(200);
    expect((await user.get('/')).status).toBe(200);
    const ready = await t.call('GET', '/readyz', { token: null });
    expect(ready.status).toBe(200);
    expect(ready.json.checks).toContainEqual({ name: 'event-loop', ok: true, detail: 'lags 0 ms (bound 500 ms)' });

    lag.set(1_500);
    const api = await t.call('GET', '/api/sites');
    expect(api.status).toBe(503);
    expect(api.headers.get('content-type')).toBe('application/problem+json');
    expect(api.headers.get('retry-after')).toBe('2');
    expect(api.json.type).toBe('/problems/overloaded');
    // A write is refused before it does anything.
    const write = await t.call('POST', '/api/sites', { json: { url: 'http://127.0.0.1:1' } });
    expect(write.status).toBe(503);
    const page = await user.get('/');
    expect(page.status).toBe(503);
    expect(page.headers.get('retry-after')).toBe('2');
    expect(((await page.json()) as { type: string }).type).toBe('/problems/overloaded');
    expect((await user.get('/events')).status).toBe(503);

    // What supervisors and Prometheus call still answers; readiness says why it is not ready.
    expect((await t.call('GET', '/healthz', { token: null })).status).toBe(200);
    expect((await t.call('GET', '/api/health', { token: null })).status).toBe(200);
    const unready = await t.call('GET', '/readyz', { token: null });
    expect(unready.status).toBe(503);
    expect(unready.json.status).toBe('unavailable');
    expect(unready.json.checks).toContainEqual({
      name: 'event-loop',
      ok: false,
      detail: 'lags 1500 ms (bound 500 ms): the dashboard and API answer 503 overloaded',
    });
    const scrape = await t.call('GET', '/metrics', { token: t.readToken });
    expect(scrape.status).toBe(200);
    expect(sampleValue(parsePrometheusText(scrape.text), 'sitewarden_http_overloaded_total', {})).toBe(4);

    lag.set(100);
    const sites = await t.call('GET', '/api/sites');
    expect(sites.status).toBe(200);
    expect(sites.json.items).toEqual([]); // the refused POST connected nothing
    expect((await user.get('/')).status).toBe(200);
  });

  it('never sheds without a bound (0, or a test app that sets none)', async () => {
    const lag = fakeLag(10_000);
    t = createTestApp({ app: { overload: { boundMs: 0, lag } } });
    expect((await t.call('GET', '/api/sites')).status).toBe(200);
    const ready = await t.call('GET', '/readyz', { token: null });
    expect(ready.status).toBe(200);
    expect(ready.json.checks.map((check: { name: string }) => check.name)).not.toContain('event-loop');
  });
});
