import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SITE_OWNED_PARAMETERS } from '../../src/http/permissions.js';
import { backups, performanceAudits, restores, safeUpdates, updateHistory } from '../../src/schema.js';
import { createId } from '../../src/shared/ids.js';
import { SafeUpdatePolicySchema } from '../../src/shared/safe-update-checks.js';
import { scopedPrincipal } from '../support/scoped-principal.js';
import { createFakeClock, createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';
import { signIn } from '../dashboard/signed-in.js';

const PASSWORD = 'correct horse battery staple';
const UNKNOWN_SITE = 'site_01kzzzzzzzzzzzzzzzzzzzzzzz';

/** The ids a route under a site names besides the site (SITE_OWNED_PARAMETERS), by parameter name. */
type OwnIds = Record<'backupId' | 'restoreId' | 'auditId' | 'safeUpdateId' | 'entryId', string>;
const UNKNOWN_OWN: OwnIds = {
  backupId: 'bkp_01kzzzzzzzzzzzzzzzzzzzzzzz',
  restoreId: 'rst_01kzzzzzzzzzzzzzzzzzzzzzzz',
  auditId: 'perf_01kzzzzzzzzzzzzzzzzzzzzzzz',
  safeUpdateId: 'sup_01kzzzzzzzzzzzzzzzzzzzzzzz',
  entryId: 'upd_01kzzzzzzzzzzzzzzzzzzzzzzz',
};
const ownParameters = Object.keys(UNKNOWN_OWN) as (keyof OwnIds)[];

/** One object of each kind a route under a site names by its own id, written straight into the site's rows. */
function seedOwnObjects(t: TestApp, siteId: string, url: string): OwnIds {
  const now = t.clock.now();
  const db = t.database.db;
  const ids: OwnIds = {
    backupId: createId('bkp', now),
    restoreId: createId('rst', now),
    auditId: createId('perf', now),
    safeUpdateId: createId('sup', now),
    entryId: createId('upd', now),
  };
  db.insert(backups).values({ id: ids.backupId, siteId, kind: 'manual', status: 'completed', createdAt: now }).run();
  db.insert(restores)
    .values({ id: ids.restoreId, siteId, backupId: ids.backupId, status: 'completed', createdAt: now })
    .run();
  db.insert(performanceAudits)
    .values({
      id: ids.auditId,
      siteId,
      url,
      formFactor: 'mobile',
      trigger: 'manual',
      runs: 1,
      status: 'queued',
      queuedAt: now,
    })
    .run();
  db.insert(safeUpdates)
    .values({
      id: ids.safeUpdateId,
      siteId,
      itemType: 'plugin',
      slug: 'akismet',
      status: 'kept',
      phase: 'done',
      policy: JSON.stringify(SafeUpdatePolicySchema.parse({})),
      createdAt: now,
    })
    .run();
  db.insert(updateHistory)
    .values({
      id: ids.entryId,
      siteId,
      type: 'plugin',
      slug: 'akismet',
      fromVersion: '5.0',
      toVersion: '5.1',
      startedAt: now,
      finishedAt: now,
      triggerKind: 'request',
      result: 'succeeded',
    })
    .run();
  return ids;
}

/** A route pattern (`{x}` or `:x`) with its site and own ids filled in; a screenshot's name; any other parameter `x1`. */
function fill(pattern: string, site: string, own: Partial<OwnIds>): string {
  return pattern
    .replace(/\{(id|siteId)\}|:(id|siteId)\b/, site)
    .replace(/\{(\w+)\}|:(\w+)/g, (_, a?: string, b?: string) =>
      (a ?? b) === 'name' ? 'before-0.png' : (own[(a ?? b) as keyof OwnIds] ?? 'x1'),
    );
}

/** An answer with the ids the request carried (and those of the same answer to another request) replaced. */
const withoutIds = (text: string, ids: readonly string[]) => ids.reduce((out, id) => out.replaceAll(id, 'ID'), text);

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
  /** A's and B's own objects (a backup, a restore, an audit, a safe update, an update history entry). */
  let ownA: OwnIds;
  let ownB: OwnIds;
  /** The own id parameters a route answered A's object for (200), by the client. */
  const answeredOwn = new Set<string>();
  beforeAll(async () => {
    t = createTestApp({ clock: createFakeClock(new Date('2026-03-01T10:00:00Z')) });
    a = { id: '', url: 'http://127.0.0.1:9/alpha', name: 'Alpha Bakery' };
    b = { id: '', url: 'http://127.0.0.1:9/bravo-secret', name: 'Bravo Confidential' };
    a.id = insertConnectedSite(t, { url: a.url, name: a.name, tags: ['client-a'] });
    b.id = insertConnectedSite(t, { url: b.url, name: b.name, tags: ['client-b', 'shared-b'] });
    ownA = seedOwnObjects(t, a.id, a.url);
    ownB = seedOwnObjects(t, b.id, b.url);
    ({ token: clientToken, cookie } = await scopedPrincipal(t, {
      username: 'client-of-a',
      role: 'client',
      tags: ['client-a'],
      tokenName: 'client-a-token',
    }));
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
      // A route with an id of its own: real ids of A's and B's objects.
      const own = ownParameters.filter((name) => path.includes(`{${name}}`));
      if (own.length > 0) {
        const call = async (site: string, ids: OwnIds) => {
          const response = await t.call('GET', fill(`/api${path}`, site, ids), { token: clientToken });
          called++;
          expect(response.status, `GET ${fill(path, site, ids)}`).not.toBe(500);
          expectNoLeak(response.text, b, `GET ${fill(path, site, ids)}`, site);
          return response;
        };
        const ofA = await call(a.id, ownA);
        if (ofA.status === 200) for (const name of own) answeredOwn.add(name);
        // A's site with B's object: exactly what A's site with an unknown object answers.
        const crossed = await call(a.id, ownB);
        const unknown = await call(a.id, UNKNOWN_OWN);
        expect(
          { status: crossed.status, text: withoutIds(crossed.text, Object.values(ownB)) },
          `GET ${path} with A's site and B's ${own.join(', ')}`,
        ).toEqual({ status: unknown.status, text: withoutIds(unknown.text, Object.values(UNKNOWN_OWN)) });
        expect(crossed.status, `GET ${path} with B's ${own.join(', ')}`).toBeGreaterThanOrEqual(400);
        // B's site with B's object: the unknown site's answer.
        const ofB = await call(b.id, ownB);
        const unknownSite = await call(UNKNOWN_SITE, ownB);
        expect({ status: ofB.status, text: ofB.text.replaceAll(b.id, 'ID') }, `GET ${path} of B`).toEqual({
          status: unknownSite.status,
          text: unknownSite.text.replaceAll(UNKNOWN_SITE, 'ID'),
        });
      }
    }
    expect(called).toBeGreaterThan(40);
    // The scope-aware routes answered (the site's own, its list, its tags), not only refusals.
    expect(allowed).toBeGreaterThanOrEqual(5);
    // Each object a client may read answered with A's own id (the download is a manager's).
    expect([...answeredOwn].sort()).toEqual(['auditId', 'backupId', 'restoreId', 'safeUpdateId']);
  }, 300_000);

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
    for (const path of ['/api/update-policies', '/api/backup-retention', '/api/targets']) {
      const refused = await t.call('GET', path, { token: clientToken });
      expect([refused.status, refused.json.type], path).toEqual([403, '/problems/forbidden']);
      expect(refused.json.detail).toContain('not available to accounts limited to tags');
      expect(refused.json.detail).toContain('client-a');
    }
    // A client stays viewer-level: no change, even on its own site.
    const change = await t.call('PATCH', `/api/sites/${a.id}`, { token: clientToken, json: { name: 'x' } });
    expect([change.status, change.json.type]).toEqual([403, '/problems/forbidden']);
  });

  it('answers a scoped manager’s routes with an id of their own, any method, for B’s object as for an unknown one', async () => {
    // The same manager by token (the API) and signed in (the dashboard).
    const manager = await scopedPrincipal(t, {
      username: 'manager-of-a',
      role: 'manager',
      tags: ['client-a'],
      tokenName: 'manager-a',
    });
    const { token } = manager;
    const document = (await t.call('GET', '/api/openapi.json')).json as {
      paths: Record<string, Record<string, unknown>>;
    };
    const exercised = new Set<string>();
    for (const [path, operations] of Object.entries(document.paths)) {
      const own = ownParameters.filter((name) => path.includes(`{${name}}`));
      if (own.length === 0 || !/^\/sites\/\{(id|siteId)\}\//.test(path)) continue;
      for (const method of Object.keys(operations).map((m) => m.toUpperCase())) {
        const call = (ids: OwnIds) =>
          t.call(method, fill(`/api${path}`, a.id, ids), { token, json: method === 'GET' ? undefined : {} });
        const crossed = await call(ownB);
        const unknown = await call(UNKNOWN_OWN);
        const what = `${method} ${path} with A's site and B's ${own.join(', ')}`;
        expect(crossed.status, what).toBe(404);
        expect({ status: crossed.status, text: withoutIds(crossed.text, Object.values(ownB)) }, what).toEqual({
          status: unknown.status,
          text: withoutIds(unknown.text, Object.values(UNKNOWN_OWN)),
        });
        for (const name of own) exercised.add(name);
      }
    }
    // The dashboard's equivalents: pages and form posts (confirmed), the flash included.
    const routes = new Set(
      t.app.routes
        .filter((route) => route.method !== 'ALL' && !route.path.startsWith('/api'))
        .map((route) => `${route.method} ${route.path}`),
    );
    for (const route of routes) {
      const [method, path] = route.split(' ') as [string, string];
      const own = ownParameters.filter((name) => path.includes(`:${name}`));
      if (own.length === 0 || !/^\/sites\/:id\//.test(path)) continue;
      const send = async (ids: OwnIds) => {
        const url = fill(path, a.id, ids);
        const response = method === 'GET' ? await manager.get(url) : await manager.post(url, { confirm: 'yes' });
        return {
          status: response.status,
          location: response.headers.get('location'),
          flash: decodeURIComponent(/sw_flash=([^;]*)/.exec(response.headers.get('set-cookie') ?? '')?.[1] ?? ''),
          text: await response.text(),
        };
      };
      const crossed = await send(ownB);
      const unknown = await send(UNKNOWN_OWN);
      const strip = (answer: typeof crossed, ids: OwnIds) => ({
        ...answer,
        flash: withoutIds(answer.flash, Object.values(ids)),
        text: withoutIds(answer.text, Object.values(ids)),
      });
      expect(strip(crossed, ownB), `${route} with A's site and B's ${own.join(', ')}`).toEqual(
        strip(unknown, UNKNOWN_OWN),
      );
      // Refused as not found: a 404, or (a form post) a flash saying there is no such object.
      if (crossed.status === 303) expect(crossed.flash, route).toMatch(/^error:.*has no/);
      else expect(crossed.status, route).toBe(404);
      for (const name of own) exercised.add(`page:${name}`);
    }
    // Every id parameter a route under a site may carry (SITE_OWNED_PARAMETERS, slugs and names aside) was exercised.
    expect(SITE_OWNED_PARAMETERS.filter((name) => name !== 'slug' && name !== 'name').sort()).toEqual(
      [...ownParameters].sort(),
    );
    expect([...exercised].sort()).toEqual(
      [...ownParameters, 'page:auditId', 'page:backupId', 'page:entryId', 'page:safeUpdateId'].sort(),
    );
    // Nothing was started on either site: no restore beyond the seeded ones, no rollback entry.
    expect(t.database.db.select().from(restores).all()).toHaveLength(2);
    expect(t.database.db.select().from(updateHistory).all()).toHaveLength(2);
  }, 300_000);

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
      const own = ownParameters.filter((name) => path.includes(`:${name}`));
      if (own.length > 0) {
        const load = async (site: string, ids: OwnIds) => {
          const response = await t.app.request(fill(path, site, ids), { headers: { cookie } });
          const text = await response.text();
          pages++;
          expect(response.status, `GET ${fill(path, site, ids)}`).not.toBe(500);
          expectNoLeak(text, b, `page ${fill(path, site, ids)}`, site);
          return { status: response.status, location: response.headers.get('location'), text };
        };
        const ofA = await load(a.id, ownA);
        if (ofA.status === 200) for (const name of own) answeredOwn.add(`page:${name}`);
        const crossed = await load(a.id, ownB);
        const unknown = await load(a.id, UNKNOWN_OWN);
        expect(
          { ...crossed, text: withoutIds(crossed.text, Object.values(ownB)) },
          `page ${path} with A's site and B's ${own.join(', ')}`,
        ).toEqual({ ...unknown, text: withoutIds(unknown.text, Object.values(UNKNOWN_OWN)) });
        const ofB = await load(b.id, ownB);
        const unknownSite = await load(UNKNOWN_SITE, ownB);
        expect({ status: ofB.status, text: ofB.text.replaceAll(b.id, 'ID') }, `page ${path} of B`).toEqual({
          status: unknownSite.status,
          text: unknownSite.text.replaceAll(UNKNOWN_SITE, 'ID'),
        });
      }
    }
    expect(pages).toBeGreaterThan(20);
    // A's safe update report page shows (its screenshots, audit report and download answer their own 404 or 403).
    expect(answeredOwn).toContain('page:safeUpdateId');
    const overview = await (await t.app.request('/', { headers: { cookie } })).text();
    expect(overview).toContain(a.name);
    expect(overview).toMatch(/<strong>1<\/strong> sites/);
  }, 300_000);

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
    const token = (await t.services.tokens.create('mia-a', 'viewer', { userId: owner.json.id, tags: ['a'] })).token;
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

  it('lets a scoped manager change its own sites (404 outside, as an unknown site), roles still on top', async () => {
    const mine = insertConnectedSite(t, { tags: ['team-x'] });
    const theirs = insertConnectedSite(t, { tags: ['team-y'] });
    const user = await t.services.users.create('max', PASSWORD, 'manager');
    await t.services.users.setScope(user.id, ['team-x']);
    const token = (await t.services.tokens.create('max', 'manager', { userId: user.id })).token;
    // PATCH /api/sites/{id} changes the site's settings: an empty change answers the settings.
    const changed = await t.call('PATCH', `/api/sites/${mine}`, { token, json: {} });
    expect(changed.status).toBe(200);
    const other = await t.call('PATCH', `/api/sites/${theirs}`, { token, json: {} });
    const unknown = await t.call('PATCH', '/api/sites/site_01kzzzzzzzzzzzzzzzzzzzzzzz', { token, json: {} });
    expect([other.status, other.json.type]).toEqual([404, '/problems/site-not-found']);
    expect(other.json.detail.replace(theirs, 'ID')).toBe(
      unknown.json.detail.replace('site_01kzzzzzzzzzzzzzzzzzzzzzzz', 'ID'),
    );
    // Roles still apply: a viewer (or client) of the same tag changes nothing, even on its own site.
    const viewer = await t.services.users.create('val', PASSWORD, 'viewer');
    await t.services.users.setScope(viewer.id, ['team-x']);
    const viewerToken = (await t.services.tokens.create('val', 'viewer', { userId: viewer.id })).token;
    for (const [method, path] of [
      ['DELETE', `/api/sites/${mine}`],
      ['POST', `/api/sites/${mine}/backups`],
      ['GET', `/api/sites/${mine}/backups/bkp_01kzzzzzzzzzzzzzzzzzzzzzzz/download`],
      ['POST', `/api/sites/${mine}/backups/bkp_01kzzzzzzzzzzzzzzzzzzzzzzz/restore`],
    ] as const) {
      const byViewer = await t.call(method, path, { token: viewerToken });
      expect([byViewer.status, byViewer.json.detail], `${method} ${path}`).toEqual([
        403,
        expect.stringContaining('needs the manager role'),
      ]);
    }
    // A manager's own work under its site (a backup's restore, here of an unknown backup): reached, not refused.
    const restore = await t.call('POST', `/api/sites/${mine}/backups/bkp_01kzzzzzzzzzzzzzzzzzzzzzzz/restore`, {
      token,
    });
    expect([restore.status, restore.json.type]).toEqual([404, '/problems/backup-not-found']);
    // A change under its site (disconnecting it): done; under another's: the unknown site's 404, nothing changed.
    const refused = await t.call('DELETE', `/api/sites/${theirs}`, { token });
    const unknownSite = await t.call('DELETE', '/api/sites/site_01kzzzzzzzzzzzzzzzzzzzzzzz', { token });
    expect([refused.status, refused.text.replaceAll(theirs, 'ID')]).toEqual([
      404,
      unknownSite.text.replaceAll('site_01kzzzzzzzzzzzzzzzzzzzzzzz', 'ID'),
    ]);
    expect(await t.services.sites.find(theirs)).toBeDefined();
    const removed = await t.call('DELETE', `/api/sites/${mine}`, { token });
    expect(removed.status).toBe(204);
    expect(await t.services.sites.find(mine)).toBeUndefined();
    // Recorded as the scoped manager's token's (the audit log names who did it).
    const tokenId = (await t.services.tokens.list(user.id))[0]!.id;
    expect(
      (await t.services.auditLog.list({ siteId: mine, limit: 50 })).map((entry) => [
        entry.method,
        entry.status,
        entry.actorKind,
        entry.actorId,
      ]),
    ).toContainEqual(['DELETE', 204, 'token', tokenId]);
  });

  it('lets a scoped manager act on its site from the site page, and shows another’s as an unknown site', async () => {
    const mine = insertConnectedSite(t, { tags: ['team-p'], name: 'Papaya' });
    const theirs = insertConnectedSite(t, { tags: ['team-o'], name: 'Orange' });
    const session = await scopedPrincipal(t, { username: 'pia', role: 'manager', tags: ['team-p'] });
    const page = await (await session.get(`/sites/${mine}`)).text();
    expect(page).toContain(`action="/sites/${mine}/disconnect"`);
    const unknown = await session.post('/sites/site_01kzzzzzzzzzzzzzzzzzzzzzzz/disconnect', { confirm: 'yes' });
    const other = await session.post(`/sites/${theirs}/disconnect`, { confirm: 'yes' });
    expect(other.status).toBe(404);
    expect((await other.text()).replaceAll(theirs, 'ID')).toBe(
      (await unknown.text()).replaceAll('site_01kzzzzzzzzzzzzzzzzzzzzzzz', 'ID'),
    );
    expect(await t.services.sites.find(theirs)).toBeDefined();
    const done = await session.post(`/sites/${mine}/disconnect`, { confirm: 'yes' });
    expect([done.status, done.headers.get('location')]).toEqual([303, '/']);
    expect(decodeURIComponent(/sw_flash=([^;]*)/.exec(done.headers.get('set-cookie') ?? '')![1]!)).toMatch(
      /^ok:Removed/,
    );
    expect(await t.services.sites.find(mine)).toBeUndefined();
  });

  it('lets a scoped manager change its site’s tags only when the site keeps one of its scope tags', async () => {
    const mine = insertConnectedSite(t, { tags: ['team-q'] });
    const theirs = insertConnectedSite(t, { tags: ['team-r'] });
    const user = await t.services.users.create('quinn', PASSWORD, 'manager');
    await t.services.users.setScope(user.id, ['team-q', 'team-s']);
    const token = (await t.services.tokens.create('quinn', 'manager', { userId: user.id })).token;
    // Out of its own reach: refused, saying why; the tags stay.
    for (const tags of [['team-r'], []]) {
      const retag = await t.call('PUT', `/api/sites/${mine}/tags`, { token, json: { tags } });
      expect([retag.status, retag.json.type], JSON.stringify(tags)).toEqual([403, '/problems/forbidden']);
      expect(retag.json.detail).toContain(
        'must keep at least one of the tags this token is limited to (team-q, team-s)',
      );
    }
    expect((await t.services.sites.tagsOf([mine])).get(mine)).toEqual(['team-q']);
    // Keeping one of them (another of its scope's, or the same with more): allowed.
    const moved = await t.call('PUT', `/api/sites/${mine}/tags`, { token, json: { tags: ['team-s', 'staging'] } });
    expect([moved.status, moved.json.tags]).toEqual([200, ['staging', 'team-s']]);
    expect((await t.services.sites.tagsOf([mine])).get(mine)).toEqual(['staging', 'team-s']);
    // Another scope's site: the unknown site's 404, even with tags of its own scope.
    const other = await t.call('PUT', `/api/sites/${theirs}/tags`, { token, json: { tags: ['team-q'] } });
    expect([other.status, other.json.type]).toEqual([404, '/problems/site-not-found']);
    expect((await t.services.sites.tagsOf([theirs])).get(theirs)).toEqual(['team-r']);
    // The dashboard's site settings (which carry the tags): the same rule, checked before anything is written.
    const session = await scopedPrincipal(t, { username: 'quinn-web', role: 'manager', tags: ['team-q', 'team-s'] });
    const out = await session.post(`/sites/${mine}/settings`, { tags: 'team-r', intervalSeconds: '600' });
    expect(out.status).toBe(303);
    expect(decodeURIComponent(/sw_flash=([^;]*)/.exec(out.headers.get('set-cookie') ?? '')![1]!)).toContain(
      'must keep at least one of the tags your account is limited to',
    );
    expect((await t.services.sites.tagsOf([mine])).get(mine)).toEqual(['staging', 'team-s']);
    const kept = await session.post(`/sites/${mine}/settings`, { tags: 'team-q, staging' });
    expect(decodeURIComponent(/sw_flash=([^;]*)/.exec(kept.headers.get('set-cookie') ?? '')![1]!)).toBe(
      'ok:Settings saved.',
    );
    expect((await t.services.sites.tagsOf([mine])).get(mine)).toEqual(['staging', 'team-q']);
  });

  it('keeps fleet-wide configuration and new sites refused to a scoped manager', async () => {
    const user = await t.services.users.create('fern', PASSWORD, 'manager');
    await t.services.users.setScope(user.id, ['team-x']);
    const token = (await t.services.tokens.create('fern', 'manager', { userId: user.id })).token;
    const before = (await t.call('GET', '/api/sites')).json.items.length;
    for (const [method, path, json] of [
      ['POST', '/api/sites', { url: 'http://127.0.0.1:9/new', tags: ['team-x'] }],
      ['POST', '/api/webhooks', { url: 'http://127.0.0.1:9/hook' }],
      ['POST', '/api/users', { username: 'new-user' }],
      ['GET', '/api/targets', undefined],
      ['GET', '/api/backup-retention', undefined],
      ['POST', '/api/update-policies', {}],
    ] as const) {
      const refused = await t.call(method, path, { token, json });
      expect([refused.status, refused.json.detail], `${method} ${path}`).toEqual([
        403,
        expect.stringContaining('not available to accounts limited to tags'),
      ]);
    }
    expect((await t.call('GET', '/api/sites')).json.items).toHaveLength(before);
  });

  it('lets an owner see and set a user’s scope in Settings → Users', async () => {
    const owner = await signIn(t, 'olive');
    const user = await t.services.users.create('vic', PASSWORD, 'viewer');
    expect(await (await owner.get('/settings')).text()).toContain('for="scope-' + user.id + '"');
    const set = await owner.post(`/settings/users/${user.id}/scope`, { tags: 'Team-X, team-z' });
    expect(set.status).toBe(303);
    expect((await t.services.users.find(user.id))?.scopeTags).toEqual(['team-x', 'team-z']);
    expect(await owner.follow(set)).toContain('tagged team-x, team-z');
    const lifted = await owner.post(`/settings/users/${user.id}/scope`, { tags: '' });
    expect(lifted.status).toBe(303);
    expect((await t.services.users.find(user.id))?.scopeTags).toBeNull();
  });

  it('refuses a token wider than its user, control characters in tags, and a client without tags', async () => {
    const user = await t.services.users.create('cora', PASSWORD, 'viewer');
    await t.services.users.setScope(user.id, ['a']);
    const userToken = (await t.services.tokens.create('cora', 'viewer', { userId: user.id })).token;
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
    const clientToken = (await t.services.tokens.create('carl', 'client', { userId: client.id })).token;
    insertConnectedSite(t, { tags: ['a'] });
    expect((await t.call('GET', '/api/sites', { token: clientToken })).json.items).toEqual([]);
  });
});
