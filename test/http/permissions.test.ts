import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  API_PERMISSIONS,
  API_SCOPE_AWARE,
  DASHBOARD_PERMISSIONS,
  DASHBOARD_SCOPE_AWARE,
  isScopeAware,
  requiredRole,
} from '../../src/http/permissions.js';
import { roleAtLeast, roles, type Role } from '../../src/shared/actor.js';
import { createFakeClock, createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';

const PASSWORD = 'correct horse battery staple';

/** docs/api.md's "Roles" table: each route it names (`METHOD /path` or `* /path`) and the role it says. */
function documentedRoles(): Map<string, Role> {
  const page = readFileSync(resolve(import.meta.dirname, '../../docs/api.md'), 'utf8');
  const section = /## Roles\n([\s\S]*?)\n## /.exec(page)![1]!;
  const documented = new Map<string, Role>();
  for (const [, routes, role] of section.matchAll(/^\| (`[^|]+) \| (\w+) \|/gm)) {
    for (const [, route] of routes!.matchAll(/`([^`]+)`/g)) documented.set(route!, role as Role);
  }
  return documented;
}

/** One token per role, each of a user of that role. */
async function tokensByRole(t: TestApp): Promise<Record<Role, string>> {
  const entries = await Promise.all(
    roles.map(async (role) => {
      const user = await t.services.users.create(`${role}-user`, PASSWORD, role);
      return [role, (await t.services.tokens.create(`${role}-token`, role, { userId: user.id })).token] as const;
    }),
  );
  return Object.fromEntries(entries) as Record<Role, string>;
}

const below = (role: Role): Role | undefined => roles[roles.indexOf(role) - 1];

describe('roles, enforced in one place', () => {
  let t: TestApp;
  let clock: ReturnType<typeof createFakeClock>;
  let token: Record<Role, string>;
  beforeEach(async () => {
    clock = createFakeClock(new Date('2026-03-01T10:00:00Z'));
    t = createTestApp({ clock });
    token = await tokensByRole(t);
  });
  afterEach(() => t.close());

  it('gives every route of the OpenAPI document the role docs/api.md says, and refuses the role below it', async () => {
    const document = (await t.call('GET', '/api/openapi.json')).json as {
      paths: Record<string, Record<string, unknown>>;
    };
    const documented = documentedRoles();
    const listed = new Set<string>();
    let checked = 0;
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const method of Object.keys(operations).map((m) => m.toUpperCase())) {
        const apiPath = `/api${path}`;
        if (apiPath === '/api/health' || apiPath === '/api/authorization/callback') continue; // public
        const inDocs = documented.get(`${method} ${apiPath}`) ?? documented.get(`* ${apiPath}`);
        if (inDocs) listed.add(documented.has(`${method} ${apiPath}`) ? `${method} ${apiPath}` : `* ${apiPath}`);
        const expected: Role = inDocs ?? (method === 'GET' ? 'viewer' : 'manager');
        const routePath = apiPath.replace(/\{(\w+)\}/g, ':$1');
        expect(requiredRole(API_PERMISSIONS, method, routePath), `${method} ${apiPath}`).toBe(expected);
        // Enforced: the role just below gets 403 forbidden naming the role needed, before any validation.
        const lower = below(expected)!;
        const concrete = apiPath.replace(/\{\w+\}/g, 'x1');
        // A client (limited to tags, here none) is a viewer of its sites on the routes that filter by
        // scope (test/http/site-scopes.test.ts); every other route refuses it for its scope.
        if (lower === 'client' && isScopeAware(API_SCOPE_AWARE, method, routePath)) {
          // No scope tag here, so no site: a route under a site answers the unknown site's 404.
          const answered = await t.call(method, concrete, { token: token.client });
          expect(answered.status, `${method} ${apiPath} as client`).not.toBe(500);
          expect(answered.json?.detail ?? '', `${method} ${apiPath} as client`).not.toContain('limited to tags');
          if (/^\/api\/sites\/\{(id|siteId)\}/.test(apiPath))
            expect([answered.status, answered.json?.type], `${method} ${apiPath} as client`).toEqual([
              404,
              '/problems/site-not-found',
            ]);
          checked++;
          continue;
        }
        if (lower === 'client') {
          const refused = await t.call(method, concrete, {
            token: token.client,
            json: method === 'GET' ? undefined : {},
          });
          expect([refused.status, refused.json?.detail], `${method} ${apiPath} as client`).toEqual([
            403,
            expect.stringContaining('not available to accounts limited to tags'),
          ]);
          checked++;
          continue;
        }
        const refused = await t.call(method, concrete, {
          token: token[lower],
          json: method === 'GET' ? undefined : {},
        });
        expect([refused.status, refused.json?.type], `${method} ${apiPath} as ${lower}`).toEqual([
          403,
          '/problems/forbidden',
        ]);
        expect(refused.json.detail, `${method} ${apiPath}`).toContain(`needs the ${expected} role`);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(80);
    // Every route the table names exists.
    for (const route of documented.keys()) expect(listed, `docs/api.md names ${route}`).toContain(route);
  });

  it('gives scoped principals only scope-aware routes, their role on top: role × scope × every route', async () => {
    const a = insertConnectedSite(t, { tags: ['a'] });
    const b = insertConnectedSite(t, { tags: ['b'] });
    const unknownSite = 'site_01kzzzzzzzzzzzzzzzzzzzzzzz';
    // Limited to tag a: a client, a viewer and a manager (users and their tokens).
    const scoped: Partial<Record<Role, string>> = {};
    for (const role of ['client', 'viewer', 'manager'] as const) {
      const user = await t.services.users.create(`scoped-${role}`, PASSWORD, role);
      await t.services.users.setScope(user.id, ['a']);
      scoped[role] = (await t.services.tokens.create(`scoped-${role}`, role, { userId: user.id })).token;
    }
    const document = (await t.call('GET', '/api/openapi.json')).json as {
      paths: Record<string, Record<string, unknown>>;
    };
    let underSite = 0;
    for (const [path, operations] of Object.entries(document.paths)) {
      const apiPath = `/api${path}`;
      if (apiPath === '/api/health' || apiPath === '/api/authorization/callback') continue; // public
      const routePath = apiPath.replace(/\{(\w+)\}/g, ':$1');
      const siteRoute = /^\/api\/sites\/\{(id|siteId)\}/.test(apiPath);
      const concrete = (site: string) => apiPath.replace(/\{(id|siteId)\}/, site).replace(/\{\w+\}/g, 'x1');
      for (const method of Object.keys(operations).map((m) => m.toUpperCase())) {
        const aware = isScopeAware(API_SCOPE_AWARE, method, routePath);
        // The rule: besides the listed rows, a route under one site is scope-aware (no other kind of route is).
        if (!API_SCOPE_AWARE.some((rule) => rule.path === routePath || rule.path.endsWith('/*')))
          expect(aware, `${method} ${apiPath} scope-aware`).toBe(siteRoute);
        const needed = requiredRole(API_PERMISSIONS, method, routePath);
        for (const role of ['client', 'viewer', 'manager'] as const) {
          const what = `${method} ${apiPath} as a ${role} of tag a`;
          const send = (site: string) =>
            t.call(method, concrete(site), { token: scoped[role], json: method === 'GET' ? undefined : {} });
          // Outside the scope (B's site), or any route not scope-aware.
          const answer = await send(b);
          expect(answer.status, what).not.toBe(500);
          if (!aware) {
            expect([answer.status, answer.json?.detail], what).toEqual([
              403,
              expect.stringContaining('not available to accounts limited to tags'),
            ]);
          } else if (!roleAtLeast(role === 'client' ? 'viewer' : role, needed)) {
            expect([answer.status, answer.json?.detail], what).toEqual([
              403,
              expect.stringContaining(`needs the ${needed} role`),
            ]);
          } else if (siteRoute) {
            // B's site is an unknown site: the same status, type and detail.
            const unknown = await send(unknownSite);
            expect([answer.status, answer.json?.type], what).toEqual([404, '/problems/site-not-found']);
            expect(answer.text.replaceAll(b, 'ID'), what).toBe(unknown.text.replaceAll(unknownSite, 'ID'));
            underSite++;
          } else {
            expect(answer.json?.detail ?? '', what).not.toContain('limited to tags');
          }
        }
      }
    }
    // Changes under a site are a manager's: every one reached B's site check (the site's reads too).
    expect(underSite).toBeGreaterThan(60);
    expect(a).toBeTruthy();
    // A route that would name another id of its own, or a new route elsewhere, is refused until given a rule.
    expect(isScopeAware(API_SCOPE_AWARE, 'GET', '/api/sites/:siteId/widgets/:widgetId')).toBe(false);
    expect(isScopeAware(API_SCOPE_AWARE, 'POST', '/api/sites/:siteId/copy-to/:otherSiteId')).toBe(false);
    expect(isScopeAware(API_SCOPE_AWARE, 'POST', '/api/widgets')).toBe(false);
    expect(isScopeAware(API_SCOPE_AWARE, 'GET', '/api/sites/:siteId/files/*')).toBe(false);
    expect(isScopeAware(DASHBOARD_SCOPE_AWARE, 'POST', '/sites/:id/widgets/:widgetId')).toBe(false);
    expect(isScopeAware(DASHBOARD_SCOPE_AWARE, 'POST', '/widgets')).toBe(false);
    expect(isScopeAware(API_SCOPE_AWARE, 'POST', '/api/sites/:siteId/widgets')).toBe(true);
  }, 300_000);

  it('gives a scoped dashboard manager its site’s pages and forms, another’s as an unknown site, nothing else', async () => {
    insertConnectedSite(t, { tags: ['a'] });
    const b = insertConnectedSite(t, { tags: ['b'] });
    const unknownSite = 'site_01kzzzzzzzzzzzzzzzzzzzzzzz';
    const user = await t.services.users.create('dash-manager', PASSWORD, 'manager');
    await t.services.users.setScope(user.id, ['a']);
    const signedIn = await t.app.request('/sign-in', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username: 'dash-manager', password: PASSWORD }).toString(),
    });
    const cookie = /sw_session=[^;]+/.exec(signedIn.headers.get('set-cookie')!)![0];
    const csrf = /data-csrf="([^"]+)"/.exec(await (await t.app.request('/', { headers: { cookie } })).text())![1]!;
    const send = async (method: string, path: string) => {
      const response = await t.app.request(path, {
        method,
        headers: { cookie, ...(method === 'GET' ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) },
        body: method === 'GET' ? undefined : new URLSearchParams({ _csrf: csrf, confirm: 'yes' }).toString(),
      });
      return { status: response.status, text: await response.text() };
    };
    const routes = new Set(
      t.app.routes
        .filter((route) => route.method !== 'ALL' && !route.path.startsWith('/api') && !route.path.includes('*'))
        .map((route) => `${route.method} ${route.path}`),
    );
    let checked = 0;
    for (const route of routes) {
      const [method, path] = route.split(' ') as [string, string];
      // The signed-in pages and forms (sign-in, assets, health and metrics are not the dashboard's; /events is a stream).
      if (!/^\/($|sites|activity|updates|backups|settings|fleet|connector\.zip)/.test(path)) continue;
      const siteRoute = /^\/sites\/:id(\/|$)/.test(path);
      const aware = isScopeAware(DASHBOARD_SCOPE_AWARE, method, path);
      if (!DASHBOARD_SCOPE_AWARE.some((rule) => rule.path === path || rule.path.endsWith('/*')))
        expect(aware, `${route} scope-aware`).toBe(siteRoute);
      const concrete = (site: string) => path.replace(/:id\b/, site).replace(/:\w+/g, 'x1');
      if (!aware) {
        // Refused before anything else (its role, its form): nothing outside the scope is reached.
        const answer = await send(method, concrete(b));
        expect([answer.status, answer.text.includes('not available to accounts limited to tags')], route).toEqual([
          403,
          true,
        ]);
      } else if (siteRoute) {
        if (!roleAtLeast('manager', requiredRole(DASHBOARD_PERMISSIONS, method, path))) continue;
        const answer = await send(method, concrete(b));
        const unknown = await send(method, concrete(unknownSite));
        expect(answer.status, route).toBe(404);
        expect(answer.text.replaceAll(b, 'ID'), route).toBe(unknown.text.replaceAll(unknownSite, 'ID'));
      } else continue;
      checked++;
    }
    expect(checked).toBeGreaterThan(30);
  }, 300_000);

  it('lets each role do what it may: reads, state changes, owner routes and backup downloads', async () => {
    const status = async (role: Role, method: string, path: string, json?: unknown) =>
      (await t.call(method, path, { token: token[role], json })).status;
    const matrix: [string, string, unknown, Record<Role, number>][] = [
      // A client without scope tags lists no site (test/http/site-scopes.test.ts).
      ['GET', '/api/sites', undefined, { client: 200, viewer: 200, manager: 200, owner: 200 }],
      // A state change: a manager reaches the route (its body is refused by validation, not by role).
      ['POST', '/api/sites', { url: 'not a url' }, { client: 403, viewer: 403, manager: 400, owner: 400 }],
      ['GET', '/api/webhooks', undefined, { client: 403, viewer: 403, manager: 403, owner: 200 }],
      ['GET', '/api/users', undefined, { client: 403, viewer: 403, manager: 403, owner: 200 }],
      [
        'GET',
        '/api/sites/site_x/backups/bkp_x/download',
        undefined,
        { client: 403, viewer: 403, manager: 404, owner: 404 },
      ],
      ['POST', '/api/sites/site_x/backups/bkp_x/restore', {}, { client: 403, viewer: 403, manager: 404, owner: 404 }],
    ];
    for (const [method, path, json, expected] of matrix) {
      for (const role of roles)
        expect(await status(role, method, path, json), `${role} ${method} ${path}`).toBe(expected[role]);
    }
    const refused = await t.call('GET', '/api/sites/site_x/backups/bkp_x/download', { token: token.viewer });
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(refused.json.detail).toMatch(/needs the manager role; this token has the viewer role/);
  });

  it('keeps the old scopes working: a write token is an owner’s, a read token a viewer’s', async () => {
    expect((await t.call('GET', '/api/webhooks', { token: t.writeToken })).status).toBe(200);
    expect((await t.call('GET', '/api/sites', { token: t.readToken })).status).toBe(200);
    expect((await t.call('POST', '/api/sites', { token: t.readToken, json: {} })).status).toBe(403);
    const created = await t.call('POST', '/api/tokens', { token: t.writeToken, json: { name: 'ci', scope: 'read' } });
    expect(created.status).toBe(201);
    expect([created.json.role, created.json.scope]).toEqual(['viewer', 'read']);
  });

  it('lowers a token to its user’s current role at each request', async () => {
    const alice = await t.services.users.create('alice', PASSWORD, 'owner');
    const aliceToken = (await t.services.tokens.create('alice-owner', 'owner', { userId: alice.id })).token;
    expect((await t.call('GET', '/api/webhooks', { token: aliceToken })).status).toBe(200);
    const demoted = await t.call('PATCH', `/api/users/${alice.id}`, { json: { role: 'manager' } });
    expect([demoted.status, demoted.json.role]).toEqual([200, 'manager']);
    const refused = await t.call('GET', '/api/webhooks', { token: aliceToken });
    expect([refused.status, refused.json.detail]).toEqual([
      403,
      'GET /api/webhooks needs the owner role; this token has the manager role',
    ]);
    expect((await t.call('POST', '/api/sites', { token: aliceToken, json: {} })).status).toBe(400);
    // The token keeps its own role; promoted again, the user's token is an owner's again.
    await t.services.users.setRole(alice.id, 'owner');
    expect((await t.call('GET', '/api/webhooks', { token: aliceToken })).status).toBe(200);
    // A deleted user's tokens are refused like revoked ones.
    expect((await t.call('DELETE', `/api/users/${alice.id}`)).status).toBe(204);
    expect((await t.call('GET', '/api/sites', { token: aliceToken })).status).toBe(401);
    expect(t.logs.events('user.role_changed')).toEqual([
      expect.objectContaining({ userId: alice.id, from: 'owner', to: 'manager' }),
      expect.objectContaining({ userId: alice.id, from: 'manager', to: 'owner' }),
    ]);
  });

  it('refuses an expired token like a revoked one', async () => {
    const created = await t.call('POST', '/api/tokens', {
      token: token.manager,
      json: { name: 'short-lived', role: 'viewer', expiresInDays: 1 },
    });
    expect(created.status).toBe(201);
    expect(created.json.expiresAt).toBe('2026-03-02T10:00:00.000Z');
    expect((await t.call('GET', '/api/sites', { token: created.json.token })).status).toBe(200);
    clock.advance(86_400_000);
    const refused = await t.call('GET', '/api/sites', { token: created.json.token });
    expect([refused.status, refused.json.type]).toEqual([401, '/problems/unauthorized']);
  });

  it('keeps tokens per user: never above the asker, listed and revoked by their user, all of them by an owner', async () => {
    const tooHigh = await t.call('POST', '/api/tokens', { token: token.viewer, json: { name: 'x', role: 'manager' } });
    expect([tooHigh.status, tooHigh.json.type]).toEqual([403, '/problems/token-role-too-high']);
    const users = (await t.call('GET', '/api/users', { token: token.owner })).json.items as {
      id: string;
      username: string;
    }[];
    const managerId = users.find((u) => u.username === 'manager-user')!.id;
    const forOther = await t.call('POST', '/api/tokens', {
      token: token.viewer,
      json: { name: 'x', userId: managerId },
    });
    expect(forOther.status).toBe(403);
    const mine = await t.call('POST', '/api/tokens', { token: token.viewer, json: { name: 'viewer-2' } });
    expect([mine.status, mine.json.role]).toEqual([201, 'viewer']);
    // An owner creates for another user, within that user's role.
    const byOwner = await t.call('POST', '/api/tokens', {
      token: token.owner,
      json: { name: 'deploy', role: 'owner', userId: managerId },
    });
    expect([byOwner.status, byOwner.json.type]).toEqual([403, '/problems/token-role-too-high']);
    const deploy = await t.call('POST', '/api/tokens', {
      token: token.owner,
      json: { name: 'deploy', role: 'manager', userId: managerId },
    });
    expect([deploy.status, deploy.json.userId]).toEqual([201, managerId]);
    const viewerList = (await t.call('GET', '/api/tokens', { token: token.viewer })).json.items as { name: string }[];
    expect(viewerList.map((x) => x.name).sort()).toEqual(['viewer-2', 'viewer-token']);
    const ownerList = (await t.call('GET', `/api/tokens?userId=${managerId}`, { token: token.owner })).json.items as {
      name: string;
    }[];
    expect(ownerList.map((x) => x.name).sort()).toEqual(['deploy', 'manager-token']);
    // Another user's token is unknown to a non-owner; its own it revokes.
    expect((await t.call('DELETE', `/api/tokens/${deploy.json.id}`, { token: token.viewer })).status).toBe(404);
    expect((await t.call('DELETE', `/api/tokens/${mine.json.id}`, { token: token.viewer })).status).toBe(200);
    expect((await t.call('DELETE', `/api/tokens/${deploy.json.id}`, { token: token.owner })).status).toBe(200);
    expect((await t.call('GET', '/api/sites', { token: deploy.json.token })).status).toBe(401);
    expect(t.logs.events('token.revoked').at(-1)).toMatchObject({ tokenId: deploy.json.id, userId: managerId });
  });

  it('keeps the last owner: not demoted, not deleted', async () => {
    const users = (await t.call('GET', '/api/users')).json.items as { id: string; username: string; role: Role }[];
    const owner = users.find((u) => u.role === 'owner')!;
    for (const [method, json] of [
      ['PATCH', { role: 'viewer' }],
      ['DELETE', undefined],
    ] as const) {
      const refused = await t.call(method, `/api/users/${owner.id}`, { json });
      expect([refused.status, refused.json.type], method).toEqual([409, '/problems/last-owner']);
      expect(refused.json.detail).toContain('only owner');
    }
    const second = await t.call('POST', '/api/users', { json: { username: 'second', role: 'owner' } });
    expect([second.status, typeof second.json.password]).toEqual([201, 'string']);
    expect((await t.call('PATCH', `/api/users/${owner.id}`, { json: { role: 'viewer' } })).status).toBe(200);
    const last = await t.call('PATCH', `/api/users/${second.json.id}`, { json: { role: 'manager' } });
    expect(last.status).toBe(409);
  });
});
