import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFakeClock, createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';
import { signIn } from '../dashboard/signed-in.js';

const PASSWORD = 'correct horse battery staple';
const UNKNOWN_SITE = 'site_01kzzzzzzzzzzzzzzzzzzzzzzz';

/**
 * Fails when `body` names a site of client B: its id, URL (with or without the scheme) or name.
 * `asked`: the id the request itself carried, which an answer may echo (as it echoes an unknown id).
 */
function expectNoLeak(body: string, b: { id: string; url: string; name: string }, what: string, asked?: string) {
  if (asked) body = body.replaceAll(asked, 'ID');
  for (const secret of [b.id, b.url, b.url.replace(/^https?:\/\//, ''), b.name])
    expect(body.includes(secret), `${what} names client B's site (${secret})`).toBe(false);
}

/**
 * The leak test of issue 33 (docs/design/team-access.md): a fleet of two clients, sites tagged
 * `client-a` and `client-b`; a client of tag A, by token and signed in, calls every GET route of
 * the OpenAPI document and every dashboard page, with ids of both clients' sites substituted. No
 * answer may name a site of client B, and B's ids answer exactly as unknown ids do.
 */
describe('site scopes: a client of tag A never sees client B', () => {
  let t: TestApp;
  let a: { id: string; url: string; name: string };
  let b: { id: string; url: string; name: string };
  let clientToken: string;
  let cookie: string;
  beforeAll(async () => {
    t = createTestApp({ clock: createFakeClock(new Date('2026-03-01T10:00:00Z')) });
    a = { id: '', url: 'http://127.0.0.1:9/alpha', name: 'Alpha Bakery' };
    b = { id: '', url: 'http://127.0.0.1:9/bravo-secret', name: 'Bravo Confidential' };
    a.id = insertConnectedSite(t, { url: a.url, name: a.name, tags: ['client-a'] });
    b.id = insertConnectedSite(t, { url: b.url, name: b.name, tags: ['client-b', 'shared-b'] });
    const user = await t.services.users.create('client-of-a', PASSWORD, 'client');
    t.services.users.setScope(user.id, ['client-a']);
    clientToken = t.services.tokens.create('client-a-token', 'client', { userId: user.id }).token;
    const signedIn = await t.app.request('/sign-in', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username: 'client-of-a', password: PASSWORD }).toString(),
    });
    cookie = /sw_session=[^;]+/.exec(signedIn.headers.get('set-cookie')!)![0];
  });
  afterAll(() => t.close());

  it('calls every GET route of the OpenAPI document: nothing of client B, B’s ids answered as unknown ids', async () => {
    const document = (await t.call('GET', '/api/openapi.json')).json as {
      paths: Record<string, Record<string, unknown>>;
    };
    let called = 0;
    let allowed = 0;
    for (const [path, operations] of Object.entries(document.paths)) {
      if (!('get' in operations)) continue;
      const hasSite = /\{(id|siteId)\}/.test(path);
      // Every other parameter: a value no resource has (a route refusing it must not leak either).
      const concrete = (site: string) => `/api${path}`.replace(/\{(id|siteId)\}/, site).replace(/\{\w+\}/g, 'x1');
      const answers = new Map<string, { status: number; text: string; type?: string }>();
      for (const site of hasSite ? [a.id, b.id, UNKNOWN_SITE] : [a.id]) {
        const response = await t.call('GET', concrete(site), { token: clientToken });
        called++;
        expect(response.status, `GET ${concrete(site)}`).not.toBe(500);
        expectNoLeak(response.text, b, `GET ${concrete(site)}`, site);
        answers.set(site, { status: response.status, text: response.text, type: response.json?.type });
        if (response.status === 200) allowed++;
      }
      if (hasSite) {
        const ofB = answers.get(b.id)!;
        const unknown = answers.get(UNKNOWN_SITE)!;
        // Exactly what an unknown id answers: the same status, type and detail (the id itself aside).
        expect(
          { status: ofB.status, text: ofB.text.replaceAll(b.id, 'ID') },
          `GET ${path} with client B's site`,
        ).toEqual({ status: unknown.status, text: unknown.text.replaceAll(UNKNOWN_SITE, 'ID') });
      }
    }
    expect(called).toBeGreaterThan(40);
    // The scope-aware routes answered (the site's own, its list, its tags), not only refusals.
    expect(allowed).toBeGreaterThanOrEqual(5);
  });

  it('lists, counts and searches only the sites in scope', async () => {
    const list = await t.call('GET', '/api/sites', { token: clientToken });
    expect(list.status).toBe(200);
    expect(list.json.items.map((site: { id: string }) => site.id)).toEqual([a.id]);
    const searched = await t.call('GET', '/api/sites?q=bravo', { token: clientToken });
    expect(searched.json.items).toEqual([]);
    const byTag = await t.call('GET', '/api/sites?tag=client-b', { token: clientToken });
    expect(byTag.json.items).toEqual([]);
    const tags = await t.call('GET', '/api/tags', { token: clientToken });
    expect(tags.json.items).toEqual([{ tag: 'client-a', sites: 1 }]);
    const own = await t.call('GET', `/api/sites/${a.id}`, { token: clientToken });
    expect([own.status, own.json.name]).toEqual([200, a.name]);
    const other = await t.call('GET', `/api/sites/${b.id}`, { token: clientToken });
    expect([other.status, other.json.type]).toEqual([404, '/problems/site-not-found']);
    // An owner still sees both.
    expect((await t.call('GET', '/api/sites')).json.items).toHaveLength(2);
  });

  it('refuses routes that do not filter by scope with 403 forbidden saying why', async () => {
    for (const path of ['/api/fleet/updates', '/api/jobs', '/api/update-policies']) {
      const refused = await t.call('GET', path, { token: clientToken });
      expect([refused.status, refused.json.type], path).toEqual([403, '/problems/forbidden']);
      expect(refused.json.detail).toContain('not available to accounts limited to tags');
      expect(refused.json.detail).toContain('client-a');
    }
    // A client stays viewer-level: no change, even on its own site.
    const change = await t.call('PATCH', `/api/sites/${a.id}`, { token: clientToken, json: { name: 'x' } });
    expect([change.status, change.json.type]).toEqual([403, '/problems/forbidden']);
  });

  it('shows no dashboard page naming client B; B’s site pages are the unknown site’s', async () => {
    const dashboardRoutes = [
      ...new Set(
        t.app.routes
          .filter((route) => route.method === 'GET' && !route.path.startsWith('/api') && !route.path.includes('*'))
          .map((route) => route.path),
      ),
    ];
    let pages = 0;
    for (const path of dashboardRoutes) {
      if (path === '/events') continue; // a stream: below
      const hasSite = path.includes(':id') || path.includes(':siteId');
      const concrete = (site: string) => path.replace(/:(id|siteId)\b/, site).replace(/:\w+/g, 'x1');
      const bodies = new Map<string, { status: number; text: string }>();
      for (const site of hasSite ? [a.id, b.id, UNKNOWN_SITE] : [a.id]) {
        const response = await t.app.request(concrete(site), { headers: { cookie } });
        const text = await response.text();
        pages++;
        expect(response.status, `GET ${concrete(site)}`).not.toBe(500);
        expectNoLeak(text, b, `page ${concrete(site)}`, site);
        bodies.set(site, { status: response.status, text });
      }
      if (hasSite) {
        const ofB = bodies.get(b.id)!;
        const unknown = bodies.get(UNKNOWN_SITE)!;
        expect({ status: ofB.status, text: ofB.text.replaceAll(b.id, 'ID') }, `page ${path}`).toEqual({
          status: unknown.status,
          text: unknown.text.replaceAll(UNKNOWN_SITE, 'ID'),
        });
      }
    }
    expect(pages).toBeGreaterThan(20);
    const overview = await (await t.app.request('/', { headers: { cookie } })).text();
    expect(overview).toContain(a.name);
    expect(overview).toMatch(/<strong>1<\/strong> sites/);
  });

  it('streams only the events of sites in scope', async () => {
    const response = await t.app.request('/events', { headers: { cookie } });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    t.services.events.emit('site.connected', { siteId: b.id, url: b.url, username: 'admin', mode: 'credentials' });
    t.services.events.emit('site.connected', { siteId: a.id, url: a.url, username: 'admin', mode: 'credentials' });
    let text = '';
    const decoder = new TextDecoder();
    while (!text.includes(a.id)) text += decoder.decode((await reader.read()).value);
    await reader.cancel();
    expectNoLeak(text, b, 'the event stream');
  });
});

describe('site scopes of users and tokens', () => {
  let t: TestApp;
  beforeAll(() => {
    t = createTestApp({ clock: createFakeClock(new Date('2026-03-01T10:00:00Z')) });
  });
  afterAll(() => t.close());

  it('gives a token the intersection of its own tags and its user’s, and follows a user’s change at once', async () => {
    const siteA = insertConnectedSite(t, { tags: ['a'] });
    const siteB = insertConnectedSite(t, { tags: ['b'] });
    const siteAB = insertConnectedSite(t, { tags: ['a', 'b'] });
    const owner = await t.call('POST', '/api/users', {
      json: { username: 'mia', password: PASSWORD, role: 'manager' },
    });
    expect(owner.status).toBe(201);
    const limited = await t.call('PATCH', `/api/users/${owner.json.id}`, { json: { scopeTags: ['A', 'b'] } });
    expect([limited.status, limited.json.scopeTags]).toEqual([200, ['a', 'b']]);
    expect(t.logs.events('user.scope_changed')).toHaveLength(1);
    const token = t.services.tokens.create('mia-a', 'viewer', { userId: owner.json.id, tags: ['a'] }).token;
    const ids = async () =>
      ((await t.call('GET', '/api/sites', { token })).json.items as { id: string }[]).map((site) => site.id).sort();
    expect(await ids()).toEqual([siteA, siteAB].sort());
    // The user loses tag a: the (cached) token follows at once.
    await t.call('PATCH', `/api/users/${owner.json.id}`, { json: { scopeTags: ['b'] } });
    expect(await ids()).toEqual([]);
    await t.call('PATCH', `/api/users/${owner.json.id}`, { json: { scopeTags: null } });
    expect(await ids()).toEqual([siteA, siteAB].sort());
    expect(siteB).toBeTruthy();
  });

  it('lets a scoped manager change only its own sites, and nothing a route does not scope yet', async () => {
    const mine = insertConnectedSite(t, { tags: ['team-x'] });
    const theirs = insertConnectedSite(t, { tags: ['team-y'] });
    const user = await t.services.users.create('max', PASSWORD, 'manager');
    t.services.users.setScope(user.id, ['team-x']);
    const token = t.services.tokens.create('max', 'manager', { userId: user.id }).token;
    // PATCH /api/sites/{id} changes the site's settings: an empty change answers the settings.
    const changed = await t.call('PATCH', `/api/sites/${mine}`, { token, json: {} });
    expect(changed.status).toBe(200);
    const other = await t.call('PATCH', `/api/sites/${theirs}`, { token, json: {} });
    const unknown = await t.call('PATCH', '/api/sites/site_01kzzzzzzzzzzzzzzzzzzzzzzz', { token, json: {} });
    expect([other.status, other.json.type]).toEqual([404, '/problems/site-not-found']);
    expect(other.json.detail.replace(theirs, 'ID')).toBe(
      unknown.json.detail.replace('site_01kzzzzzzzzzzzzzzzzzzzzzzz', 'ID'),
    );
    const retag = await t.call('PUT', `/api/sites/${mine}/tags`, { token, json: { tags: ['team-y'] } });
    expect([retag.status, retag.json.detail]).toEqual([
      403,
      expect.stringContaining('not available to accounts limited to tags'),
    ]);
    expect(t.services.sites.tagsOf([mine]).get(mine)).toEqual(['team-x']);
  });

  it('lets an owner see and set a user’s scope in Settings → Users', async () => {
    const owner = await signIn(t, 'olive');
    const user = await t.services.users.create('vic', PASSWORD, 'viewer');
    expect(await (await owner.get('/settings')).text()).toContain('for="scope-' + user.id + '"');
    const set = await owner.post(`/settings/users/${user.id}/scope`, { tags: 'Team-X, team-z' });
    expect(set.status).toBe(303);
    expect(t.services.users.find(user.id)?.scopeTags).toEqual(['team-x', 'team-z']);
    expect(await owner.follow(set)).toContain('tagged team-x, team-z');
    const lifted = await owner.post(`/settings/users/${user.id}/scope`, { tags: '' });
    expect(lifted.status).toBe(303);
    expect(t.services.users.find(user.id)?.scopeTags).toBeNull();
  });

  it('refuses a token wider than its user, control characters in tags, and a client without tags', async () => {
    const user = await t.services.users.create('cora', PASSWORD, 'viewer');
    t.services.users.setScope(user.id, ['a']);
    const userToken = t.services.tokens.create('cora', 'viewer', { userId: user.id }).token;
    const wider = await t.call('POST', '/api/tokens', { token: userToken, json: { name: 'wide', tags: ['b'] } });
    expect([wider.status, wider.json.type]).toEqual([403, '/problems/token-scope-too-wide']);
    const narrowed = await t.call('POST', '/api/tokens', { token: userToken, json: { name: 'mine' } });
    expect([narrowed.status, narrowed.json.tags]).toEqual([201, ['a']]);
    const control = await t.call('PATCH', `/api/users/${user.id}`, { json: { scopeTags: ['a\u001b[31m'] } });
    expect([control.status, control.json.type]).toEqual([400, '/problems/scope-invalid']);
    expect(control.json.detail).toContain('control characters');
    const client = await t.services.users.create('carl', PASSWORD, 'client');
    const none = await t.call('PATCH', `/api/users/${client.id}`, { json: { scopeTags: null } });
    expect([none.status, none.json.type]).toEqual([400, '/problems/scope-invalid']);
    // A client without tags sees no site.
    const clientToken = t.services.tokens.create('carl', 'client', { userId: client.id }).token;
    insertConnectedSite(t, { tags: ['a'] });
    expect((await t.call('GET', '/api/sites', { token: clientToken })).json.items).toEqual([]);
  });
});
