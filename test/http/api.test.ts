import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { isDashboardPath } from '../../src/dashboard/dashboard.js';

let t: TestApp;
beforeEach(() => {
  t = createTestApp();
});
afterEach(async () => {
  await t.close();
});

describe('API conventions', () => {
  it('needs a bearer token everywhere but the health check', async () => {
    expect((await t.call('GET', '/api/health', { token: null })).json).toEqual({ status: 'ok', version: 'test' });
    const missing = await t.call('GET', '/api/sites', { token: null });
    expect(missing.status).toBe(401);
    expect(missing.headers.get('content-type')).toBe('application/problem+json');
    expect(missing.headers.get('www-authenticate')).toContain('Bearer');
    expect(missing.json).toMatchObject({
      type: '/problems/unauthorized',
      status: 401,
      title: expect.any(String),
      detail: expect.any(String),
    });
    expect((await t.call('GET', '/api/sites', { token: 'swt_not-a-real-token' })).status).toBe(401);
    expect((await t.call('GET', '/api/sites', { token: null, headers: { authorization: 'Basic abc' } })).status).toBe(
      401,
    );
    expect((await t.call('GET', '/api/openapi.json', { token: null })).status).toBe(401);
  });

  it('lets a read token read but not write', async () => {
    expect((await t.call('GET', '/api/sites', { token: t.readToken })).status).toBe(200);
    const write = await t.call('POST', '/api/sites', { token: t.readToken, json: { url: 'http://127.0.0.1:9' } });
    expect(write.status).toBe(403);
    expect(write.json.type).toBe('/problems/forbidden');
    expect((await t.call('DELETE', '/api/sites/site_x', { token: t.readToken })).status).toBe(403);
  });

  it('stops accepting a revoked token', async () => {
    const { token } = await t.services.tokens.create('temporary', 'read');
    expect((await t.call('GET', '/api/sites', { token })).status).toBe(200);
    await t.services.tokens.revoke('temporary');
    expect((await t.call('GET', '/api/sites', { token })).status).toBe(401);
  });

  it('stores only a hash of each token', async () => {
    const { token } = await t.services.tokens.create('hashed', 'write');
    const dump = JSON.stringify(t.database.sqlite.prepare('select * from api_tokens').all());
    expect(dump).not.toContain(token);
    expect(dump).not.toContain(token.slice(10));
  });

  it('answers unknown routes and wrong methods with problems', async () => {
    const unknown = await t.call('GET', '/api/nothing-here');
    expect(unknown.status).toBe(404);
    expect(unknown.json.type).toBe('/problems/not-found');
    const wrongMethod = await t.call('PATCH', '/api/sites');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toContain('POST');
    expect(wrongMethod.json.type).toBe('/problems/method-not-allowed');
  });

  it('lists every offending field in a validation problem', async () => {
    const response = await t.call('POST', '/api/sites', { json: { username: 'admin' } });
    expect(response.status).toBe(400);
    expect(response.json.type).toBe('/problems/validation-failed');
    expect(response.json.errors).toEqual([{ field: 'url', in: 'body', message: 'url is required' }]);
    const badQuery = await t.call('GET', '/api/sites?limit=0&state=sleepy');
    expect(badQuery.status).toBe(400);
    expect(badQuery.json.errors.map((error: { field: string }) => error.field).sort()).toEqual(['limit', 'state']);
  });

  it('accepts connection parameters as JSON, form or query', async () => {
    for (const request of [{ json: { url: 'not a url at all' } }, { form: { url: 'not a url at all' } }]) {
      const response = await t.call('POST', '/api/sites', request);
      expect(response.json.type, t.logs.raw()).toBe('/problems/invalid-site-url');
    }
    const fromQuery = await t.call('POST', '/api/sites?url=ftp%3A%2F%2Fexample.test');
    expect(fromQuery.status).toBe(400);
    expect(fromQuery.json.type).toBe('/problems/invalid-site-url');
  });

  it('rejects malformed bodies, other media types and oversized bodies', async () => {
    const malformed = await t.app.request('/api/sites', {
      method: 'POST',
      headers: { authorization: `Bearer ${t.writeToken}`, 'content-type': 'application/json' },
      body: '{"url":',
    });
    expect(malformed.status).toBe(400);
    expect(malformed.headers.get('content-type')).toBe('application/problem+json');
    const xml = await t.app.request('/api/sites', {
      method: 'POST',
      headers: { authorization: `Bearer ${t.writeToken}`, 'content-type': 'application/xml' },
      body: '<url/>',
    });
    expect(xml.status).toBe(415);
    const huge = await t.call('POST', '/api/sites', { json: { url: 'x'.repeat(2 * 1024 * 1024) } });
    expect(huge.status).toBe(413);
    expect(huge.json.type).toBe('/problems/payload-too-large');
  });

  it('paginates with a cursor and rejects a forged one', async () => {
    const now = new Date();
    for (let i = 0; i < 5; i++) {
      t.database.sqlite
        .prepare(
          "insert into sites (id, url, rest_url, state, created_at, updated_at) values (?, ?, ?, 'connected', ?, ?)",
        )
        .run(
          `site_0000000000000000000000000${i}`,
          `http://site-${i}.test`,
          `http://site-${i}.test/wp-json/`,
          now.getTime(),
          now.getTime(),
        );
    }
    const first = await t.call('GET', '/api/sites?limit=2');
    expect(first.json.items.map((site: { url: string }) => site.url)).toEqual([
      'http://site-0.test',
      'http://site-1.test',
    ]);
    const second = await t.call('GET', `/api/sites?limit=2&cursor=${first.json.nextCursor}`);
    expect(second.json.items.map((site: { url: string }) => site.url)).toEqual([
      'http://site-2.test',
      'http://site-3.test',
    ]);
    const last = await t.call('GET', `/api/sites?limit=2&cursor=${second.json.nextCursor}`);
    expect(last.json.items).toHaveLength(1);
    expect(last.json.nextCursor).toBeNull();
    const forged = await t.call('GET', '/api/sites?cursor=bm9wZQ');
    expect(forged.status).toBe(400);
    expect(forged.json.type).toBe('/problems/invalid-cursor');
  });

  it('answers 404 problems for unknown sites', async () => {
    for (const [method, path] of [
      ['GET', '/api/sites/site_unknown'],
      ['DELETE', '/api/sites/site_unknown'],
    ] as const) {
      const response = await t.call(method, path);
      expect(response.status).toBe(404);
      expect(response.json.type).toBe('/problems/site-not-found');
    }
  });

  it('describes every route in the OpenAPI document', async () => {
    const doc = (await t.call('GET', '/api/openapi.json', { token: t.readToken })).json;
    expect(doc.openapi).toBe('3.1.0');
    const operations = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const routes = t.app.routes.filter((route) => route.method !== 'ALL' && route.path !== '/api/openapi.json');
    const served = routes
      .filter((route) => route.path.startsWith('/api/'))
      .map((route) => `${route.method} ${route.path.replace(/^\/api/, '').replace(/:([^/]+)/g, '{$1}')}`);
    expect(new Set(operations)).toEqual(new Set(served));
    // Outside /api and the dashboard's pages only what supervisors and Prometheus call (README, "Metrics and health").
    expect(
      routes
        .filter((route) => !route.path.startsWith('/api/') && !isDashboardPath(route.path))
        .map((route) => `${route.method} ${route.path}`),
    ).toEqual(['GET /healthz', 'GET /readyz']);
    expect(doc.paths['/sites'].post.requestBody.content).toHaveProperty('application/x-www-form-urlencoded');
    expect(doc.paths['/sites'].post.responses).toHaveProperty('202');
    expect(doc.paths['/health'].get.security).toEqual([]);
  });
});
