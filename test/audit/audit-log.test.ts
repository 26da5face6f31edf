import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Role } from '../../src/shared/actor.js';
import { createFakeClock, createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';

const PASSWORD = 'correct horse battery staple';

/** Every stored row, every column, as the database holds it. */
const allRows = (t: TestApp) =>
  t.database.sqlite.prepare('SELECT * FROM audit_log ORDER BY id').all() as Record<string, unknown>[];

/** A token of a user of `role`. */
async function tokenOf(t: TestApp, role: Role, name = `${role}-user`) {
  const user = await t.services.users.create(name, PASSWORD, role);
  const token = await t.services.tokens.create(`${role}-token`, role, { userId: user.id });
  return { user, token: token.token, tokenId: token.summary.id };
}

/** Lets the deferred event subscribers (sign-in recording) run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

async function signInAs(t: TestApp, username: string, role: Role = 'owner') {
  await t.services.users.create(username, PASSWORD, role);
  const signedIn = await t.app.request('/sign-in', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username, password: PASSWORD }).toString(),
  });
  expect(signedIn.status).toBe(303);
  const cookie = /sw_session=[^;]+/.exec(signedIn.headers.get('set-cookie')!)![0];
  const get = (path: string) => t.app.request(path, { headers: { cookie } });
  const csrf = /data-csrf="([^"]+)"/.exec(await (await get('/settings/account')).text())![1]!;
  const post = (path: string, form: Record<string, string>, withCsrf = true) =>
    t.app.request(path, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(withCsrf ? { ...form, _csrf: csrf } : form).toString(),
    });
  return { cookie, get, post };
}

describe('the audit log', () => {
  let t: TestApp;
  let clock: ReturnType<typeof createFakeClock>;
  beforeEach(() => {
    clock = createFakeClock(new Date('2026-03-01T10:00:00Z'));
    t = createTestApp({ clock });
  });
  afterEach(() => t.close());

  it('records a viewer’s attempted change as refused (403), with the token, its user and the site', async () => {
    const siteId = insertConnectedSite(t);
    const viewer = await tokenOf(t, 'viewer');
    const refused = await t.call('POST', `/api/sites/${siteId}/backups`, { token: viewer.token, json: {} });
    expect(refused.status).toBe(403);
    const { items } = (await t.call('GET', '/api/audit')).json;
    expect(items).toEqual([
      {
        id: expect.stringMatching(/^aud_/),
        at: '2026-03-01T10:00:00.000Z',
        source: 'api',
        actor: { kind: 'token', id: viewer.tokenId, name: 'viewer-token' },
        userId: viewer.user.id,
        address: 'local',
        method: 'POST',
        action: '/api/sites/:siteId/backups',
        siteId,
        target: { kind: 'site', id: siteId },
        status: 403,
        outcome: 'refused',
        problem: '/problems/forbidden',
      },
    ]);
  });

  it('records a manager’s change with its status, target and site, and reads are not recorded', async () => {
    const siteId = insertConnectedSite(t);
    const manager = await tokenOf(t, 'manager');
    const tagged = await t.call('PUT', `/api/sites/${siteId}/tags`, { token: manager.token, json: { tags: ['acme'] } });
    expect(tagged.status).toBe(200);
    expect((await t.services.sites.tagsOf([siteId])).get(siteId)).toEqual(['acme']);
    expect((await t.call('GET', `/api/sites/${siteId}`, { token: manager.token })).status).toBe(200);
    // A validation failure is recorded as failed, with its problem type.
    const invalid = await t.call('PUT', `/api/sites/${siteId}/tags`, { token: manager.token, json: { tags: 7 } });
    expect(invalid.status).toBe(400);
    const rows = allRows(t);
    expect(rows.map((row) => [row.method, row.action, row.site_id, row.status, row.outcome, row.problem])).toEqual([
      ['PUT', '/api/sites/:id/tags', siteId, 200, 'ok', null],
      ['PUT', '/api/sites/:id/tags', siteId, 400, 'failed', '/problems/validation-failed'],
    ]);
    expect(rows[0]).toMatchObject({ actor_kind: 'token', actor_id: manager.tokenId, actor_name: 'manager-token' });
    // A target named by the route's last parameter.
    const revoked = await t.call('DELETE', `/api/tokens/${manager.tokenId}`, { token: manager.token });
    expect(revoked.status).toBe(200);
    expect(allRows(t).at(-1)).toMatchObject({ target_kind: 'token', target_id: manager.tokenId, site_id: null });
  });

  it('records a refused bearer token, but not a request without any credential', async () => {
    expect((await t.call('POST', '/api/sites', { token: 'not-a-token', json: {} })).status).toBe(401);
    expect((await t.call('POST', '/api/sites', { token: null, json: {} })).status).toBe(401);
    // An unknown route did nothing: not recorded.
    expect((await t.call('POST', '/api/nothing-here', { json: {} })).status).toBe(404);
    expect(allRows(t).map((row) => [row.actor_kind, row.action, row.status, row.outcome, row.problem])).toEqual([
      [null, '/api/sites', 401, 'refused', '/problems/unauthorized'],
    ]);
  });

  it('records dashboard form posts with the user, a failed form as failed, a stale form as refused, and sign-out', async () => {
    const alice = await signInAs(t, 'alice', 'owner');
    const aliceId = (await t.services.users.list()).find((u) => u.username === 'alice')!.id;
    const created = await alice.post('/settings/tokens', { name: 'deploy', role: 'viewer' });
    expect(created.status).toBe(201);
    expect((await t.services.tokens.list()).some((token) => token.name === 'deploy')).toBe(true);
    // The users service refuses the name: the usual redirect, with an error flash.
    const failed = await alice.post('/settings/users', { username: 'Not Valid!', role: 'viewer' });
    expect(failed.status).toBe(303);
    const stale = await alice.post('/settings/tokens', { name: 'again' }, false);
    expect(stale.status).toBe(403);
    expect((await alice.post('/sign-out', {})).status).toBe(303);
    await settle();
    const rows = allRows(t).filter((row) => row.source === 'dashboard' && row.action !== 'sign-in');
    expect(rows.map((row) => [row.actor_kind, row.actor_name, row.method, row.action, row.outcome])).toEqual([
      ['user', 'alice', 'POST', '/settings/tokens', 'ok'],
      ['user', 'alice', 'POST', '/settings/users', 'failed'],
      [null, null, 'POST', '/settings/tokens', 'refused'],
      ['user', 'alice', 'POST', '/sign-out', 'ok'],
    ]);
    expect(rows[0]).toMatchObject({ actor_id: aliceId, user_id: aliceId, status: 201 });
    expect(rows[2]).toMatchObject({ status: 403, problem: '/problems/csrf-token-invalid' });
  });

  it('records sign-in attempts, successful and failed, with the name tried and never the password', async () => {
    await t.services.users.create('bob', PASSWORD, 'viewer');
    const attempt = (username: string, password: string) =>
      t.app.request('/sign-in', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ username, password }).toString(),
      });
    expect((await attempt('bob', 'wrong password, secret-ish')).status).toBe(401);
    expect((await attempt('<b>nobody</b>', 'hunter2-hunter2')).status).toBe(401);
    expect((await attempt('bob', PASSWORD)).status).toBe(303);
    await settle();
    const bob = (await t.services.users.list()).find((u) => u.username === 'bob')!;
    expect(
      allRows(t).map((row) => [row.action, row.actor_kind, row.actor_id, row.actor_name, row.status, row.outcome]),
    ).toEqual([
      ['sign-in', null, null, 'bob', 401, 'refused'],
      ['sign-in', null, null, '<b>nobody</b>', 401, 'refused'],
      ['sign-in', 'user', bob.id, 'bob', 303, 'ok'],
    ]);
    const stored = JSON.stringify(allRows(t));
    for (const secret of ['wrong password', 'hunter2', PASSWORD]) expect(stored).not.toContain(secret);
  });

  it('records a wrong second-step code and single sign-ons, from their events', async () => {
    t.services.events.emit('user.two_factor_failed', { userId: 'usr_x', username: 'bob', address: '192.0.2.7' });
    t.services.events.emit('user.oidc_sign_in_refused', {
      reason: 'oidc-domain-refused',
      email: 'eve@elsewhere.example',
      address: '192.0.2.8',
    });
    t.services.events.emit('user.signed_in', {
      userId: 'usr_y',
      username: 'yan',
      address: '192.0.2.9',
      method: 'oidc',
    });
    await settle();
    expect(
      allRows(t).map((row) => [
        row.action,
        row.actor_kind,
        row.actor_name,
        row.user_id,
        row.address,
        row.outcome,
        row.problem,
      ]),
    ).toEqual([
      ['sign-in/two-factor', null, 'bob', 'usr_x', '192.0.2.7', 'refused', null],
      ['sign-in/oidc', null, 'eve@elsewhere.example', null, '192.0.2.8', 'refused', '/problems/oidc-domain-refused'],
      ['sign-in/oidc', 'user', 'yan', 'usr_y', '192.0.2.9', 'ok', null],
    ]);
  });

  it('never stores a password, a token, a body or a query string', async () => {
    const created = await t.call('POST', '/api/tokens?token=query-secret-value', {
      json: { name: 'ci', role: 'viewer' },
    });
    expect(created.status).toBe(201);
    const secretToken: string = created.json.token;
    const user = await t.call('POST', '/api/users', {
      json: { username: 'carol', password: 'carols-long-password', role: 'viewer' },
    });
    expect(user.status).toBe(201);
    // The new token used, and sent where it is refused.
    expect(
      (await t.call('POST', '/api/sites', { token: secretToken, json: { url: 'http://127.0.0.1:9' } })).status,
    ).toBe(403);
    await signInAs(t, 'dave');
    await settle();
    const everything = JSON.stringify(allRows(t));
    expect(allRows(t).length).toBeGreaterThanOrEqual(4);
    for (const secret of [
      secretToken,
      t.writeToken,
      'carols-long-password',
      PASSWORD,
      'query-secret-value',
      '127.0.0.1:9',
    ])
      expect(everything).not.toContain(secret);
  });

  it('filters by site, actor (a user covers their tokens), outcome and time, pages with a cursor and exports JSON lines', async () => {
    const [siteA, siteB] = [insertConnectedSite(t), insertConnectedSite(t)];
    const manager = await tokenOf(t, 'manager');
    const viewer = await tokenOf(t, 'viewer');
    for (const siteId of [siteA, siteB, siteA]) {
      await t.call('PUT', `/api/sites/${siteId}/tags`, { token: manager.token, json: { tags: ['x'] } });
      clock.advance(60_000);
    }
    await t.call('PUT', `/api/sites/${siteB}/tags`, { token: viewer.token, json: { tags: ['y'] } });
    const list = async (query: string) => (await t.call('GET', `/api/audit?${query}`)).json;
    expect((await list(`site=${siteA}`)).items).toHaveLength(2);
    expect((await list(`actor=${manager.user.id}`)).items).toHaveLength(3);
    expect((await list(`actor=${viewer.tokenId}`)).items.map((e: { outcome: string }) => e.outcome)).toEqual([
      'refused',
    ]);
    expect((await list('outcome=refused')).items).toHaveLength(1);
    expect((await list('since=2026-03-01T10:01:00Z&until=2026-03-01T10:02:00Z')).items).toHaveLength(1);
    const first = await list('limit=3');
    expect(first.items).toHaveLength(3);
    const second = await list(`limit=3&cursor=${first.nextCursor}`);
    expect(second.items).toHaveLength(1);
    expect(second.nextCursor).toBeNull();
    expect([...first.items, ...second.items].map((e: { siteId: string }) => e.siteId)).toEqual([
      siteB,
      siteA,
      siteB,
      siteA,
    ]);
    expect((await t.call('GET', '/api/audit?outcome=nope')).status).toBe(400);
    expect((await t.call('GET', '/api/audit?cursor=bad')).json.type).toBe('/problems/invalid-cursor');

    const exported = await t.app.request(`/api/audit/export?actor=${manager.user.id}`, {
      headers: { authorization: `Bearer ${t.writeToken}` },
    });
    expect(exported.status).toBe(200);
    expect(exported.headers.get('content-type')).toBe('application/x-ndjson');
    const lines = (await exported.text()).split('\n');
    expect(lines.pop()).toBe('');
    const entries = lines.map((line) => JSON.parse(line));
    expect(entries.map((e) => e.siteId)).toEqual([siteA, siteB, siteA]); // oldest first
    expect(entries[0]).toMatchObject({ actor: { kind: 'token', id: manager.tokenId }, status: 200, outcome: 'ok' });
  });

  it('exports more entries than one page of the database read', async () => {
    const siteId = insertConnectedSite(t);
    for (let i = 0; i < 1_234; i++)
      await t.services.auditLog.record({
        source: 'api',
        actor: null,
        userId: null,
        address: 'local',
        method: 'POST',
        action: '/api/x',
        siteId,
        target: null,
        status: 200,
        outcome: 'ok',
        problem: null,
      });
    const exported = await t.app.request(`/api/audit/export?site=${siteId}`, {
      headers: { authorization: `Bearer ${t.writeToken}` },
    });
    const ids = (await exported.text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).id as string);
    expect(ids).toHaveLength(1_234);
    expect(new Set(ids).size).toBe(1_234);
    expect([...ids].sort()).toEqual(ids);
  });

  it('is append-only: the database refuses an UPDATE and a DELETE; only the retention prune removes rows', async () => {
    const manager = await tokenOf(t, 'manager');
    await t.call('POST', '/api/sites', { token: manager.token, json: { url: 'not a url' } });
    clock.advance(200 * 86_400_000);
    await t.call('POST', '/api/sites', { token: manager.token, json: { url: 'still not a url' } });
    const sqlite = t.database.sqlite;
    expect(() => sqlite.prepare(`UPDATE audit_log SET status = 200`).run()).toThrow(/append-only/);
    expect(() => sqlite.prepare(`DELETE FROM audit_log`).run()).toThrow(/only by the retention prune/);
    expect(allRows(t)).toHaveLength(2);
    // Default retention 365 days: nothing is old enough yet.
    expect(await t.services.auditLog.prune()).toBe(0);
    clock.advance(200 * 86_400_000);
    expect(await t.services.auditLog.prune()).toBe(1);
    expect(allRows(t).map((row) => row.at)).toEqual([Date.parse('2026-09-17T10:00:00Z')]);
    // The prune's gate is closed again.
    expect(sqlite.prepare('SELECT count(*) AS n FROM audit_log_prune_gate').get()).toEqual({ n: 0 });
    expect(() => sqlite.prepare(`DELETE FROM audit_log`).run()).toThrow(/only by the retention prune/);
  });

  it('answers a request as it would when its entry cannot be written, and logs the failure', async () => {
    const manager = await tokenOf(t, 'manager');
    t.database.sqlite.exec(
      `CREATE TRIGGER audit_log_full BEFORE INSERT ON audit_log BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`,
    );
    const refused = await t.call('POST', '/api/sites', { token: manager.token, json: { url: 'not a url' } });
    expect(refused.status).toBe(400);
    expect(allRows(t)).toEqual([]);
    expect(t.logs.records().filter((record) => record.msg === 'could not record an audit log entry')).toMatchObject([
      { level: 'error', action: '/api/sites', err: { message: 'database or disk is full' } },
    ]);
  });

  it('prunes by SITEWARDEN_AUDIT_RETENTION_DAYS', async () => {
    await t.close();
    t = createTestApp({ clock, config: { auditLog: { retentionDays: 7 } } });
    await t.call('POST', '/api/sites', { json: {} });
    clock.advance(6 * 86_400_000);
    expect(await t.services.auditLog.prune()).toBe(0);
    clock.advance(2 * 86_400_000);
    expect(await t.services.auditLog.prune()).toBe(1);
    expect(allRows(t)).toHaveLength(0);
  });

  it('is the owner’s to read: a manager is refused on the API and the dashboard; the page escapes what it shows', async () => {
    const manager = await tokenOf(t, 'manager');
    for (const path of ['/api/audit', '/api/audit/export']) {
      const refused = await t.call('GET', path, { token: manager.token });
      expect([refused.status, refused.json.type]).toEqual([403, '/problems/forbidden']);
    }
    const mia = await signInAs(t, 'mia', 'manager');
    expect((await mia.get('/settings/audit')).status).toBe(403);
    expect((await mia.get('/settings/audit/export')).status).toBe(403);
    expect(await (await mia.get('/settings')).text()).not.toContain('href="/settings/audit"');

    await t.app.request('/sign-in', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username: '<script>alert(1)</script>', password: 'x' }).toString(),
    });
    await settle();
    const owner = await signInAs(t, 'olga', 'owner');
    const shown = await owner.get('/settings/audit?outcome=refused');
    expect(shown.status).toBe(200);
    const body = await shown.text();
    expect(body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(body).not.toContain('<script>alert(1)');
    expect(body).toContain('href="/settings/audit"');
    const exported = await owner.get('/settings/audit/export?outcome=refused');
    expect(exported.headers.get('content-type')).toBe('application/x-ndjson');
    const lines = (await exported.text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.map((e) => e.action)).toContain('sign-in');
  });
});
