import { afterEach, describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/metrics/metrics.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** GET /metrics on the main listener shows the whole fleet: a token of at least the viewer role, never a client's. */
describe('GET /metrics on the main listener', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('refuses a client token with 403 forbidden, and serves a viewer', async () => {
    t = createTestApp({ metrics: createMetrics({ processMetrics: false }) });
    const client = (await t.services.tokens.create('client-a', 'client')).token;
    const refused = await t.call('GET', '/metrics', { token: client });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
    expect(refused.json).toMatchObject({ type: '/problems/forbidden', status: 403 });
    expect(refused.json.detail).toMatch(/needs the viewer role; this token has the client role/);
    expect(refused.text).not.toMatch(/sitewarden_sites/);

    // A client user's own token is refused the same way.
    const user = await t.services.users.create('client-user', 'client password 0123', 'client');
    const own = (await t.services.tokens.create('mine', 'client', { userId: user.id })).token;
    expect((await t.call('GET', '/metrics', { token: own })).status).toBe(403);

    for (const token of [t.readToken, t.writeToken]) {
      const served = await t.call('GET', '/metrics', { token });
      expect(served.status).toBe(200);
      expect(served.text).toMatch(/^# HELP sitewarden_sites /m);
    }
    expect((await t.call('GET', '/metrics', { token: null })).status).toBe(401);
  });
});
