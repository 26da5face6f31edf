import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import { isScoped, roleAtLeast, type Access, type Role } from '../shared/actor.js';
import { commonProblems } from '../shared/errors.js';
import type { AppEnv } from './auth.js';

/**
 * What each route needs, in one place (issue 33, docs/design/team-access.md): by default a read
 * (`GET`, `HEAD`) needs a viewer and anything else a manager; the rules below are the exceptions,
 * the first that matches wins. docs/api.md's "Roles" table lists the same exceptions (a test walks
 * every route of the OpenAPI document against both).
 */
export interface PermissionRule {
  /** A method, or `*` for every method. */
  method: string;
  /** A route pattern as registered (`/api/sites/:siteId`), or a prefix ending in `/*` (the path itself and everything under it). */
  path: string;
  role: Role;
  why: string;
}

/** The API's exceptions to the default. */
export const API_PERMISSIONS: readonly PermissionRule[] = [
  // One's own sessions and two-factor (`/api/users/me/…`); an owner's, everyone's (users.routes.ts checks whose).
  { method: '*', path: '/api/users/:id/sessions/*', role: 'viewer', why: 'one’s own sessions; an owner’s, everyone’s' },
  {
    method: '*',
    path: '/api/users/:id/two-factor/*',
    role: 'viewer',
    why: 'one’s own two-factor; an owner may reset anyone’s',
  },
  { method: '*', path: '/api/users/*', role: 'owner', why: 'users and their roles are the owner’s' },
  {
    method: '*',
    path: '/api/webhooks/*',
    role: 'owner',
    why: 'a webhook sends every event (and holds a secret) elsewhere',
  },
  {
    method: 'POST',
    path: '/api/targets/:name/prune',
    role: 'owner',
    why: 'deletes snapshots on an offsite target',
  },
  {
    method: 'GET',
    path: '/api/sites/:siteId/backups/:backupId/download',
    role: 'manager',
    why: 'a backup holds the site’s secrets (wp-config.php, password hashes)',
  },
  // A token's own: anyone may list, create (at most their role) and revoke their tokens; an
  // owner those of every user (tokens.service.ts checks whose a token is).
  { method: '*', path: '/api/tokens/*', role: 'viewer', why: 'one’s own tokens; an owner’s, everyone’s' },
  { method: '*', path: '/api/audit/*', role: 'owner', why: 'who did what, from which address' },
];

/** The dashboard's exceptions (its forms post to dashboard routes, never to /api). */
export const DASHBOARD_PERMISSIONS: readonly PermissionRule[] = [
  { method: 'POST', path: '/sign-out', role: 'client', why: 'one’s own session' },
  { method: '*', path: '/settings/account/*', role: 'client', why: 'one’s own password' },
  { method: 'POST', path: '/settings/tokens/*', role: 'viewer', why: 'one’s own tokens' },
  { method: 'POST', path: '/settings/users/*', role: 'owner', why: 'users and their roles' },
  { method: 'GET', path: '/settings/users/:id/sessions', role: 'owner', why: 'another user’s sessions' },
  { method: 'POST', path: '/settings/webhooks/*', role: 'owner', why: 'webhooks' },
  { method: '*', path: '/settings/audit/*', role: 'owner', why: 'the audit log' },
  { method: 'POST', path: '/backups/targets/:name/prune', role: 'owner', why: 'deletes offsite snapshots' },
  {
    method: 'GET',
    path: '/sites/:id/backups/:backupId/download',
    role: 'manager',
    why: 'a backup holds the site’s secrets',
  },
  { method: 'GET', path: '/sites/:id/approve', role: 'manager', why: 'connects a site' },
  {
    method: 'GET',
    path: '/sites/:id/updates/history/:entryId/rollback',
    role: 'manager',
    why: 'the form that rolls an update back',
  },
  { method: 'GET', path: '/updates/policies/new', role: 'manager', why: 'the form that adds a policy' },
];

/**
 * Site scopes (issue 33): the routes that filter by the request's scope (`scope-aware`). A
 * principal limited to tags (a client, or any user or token given scope tags) may call only these;
 * any other route answers 403 `forbidden` ("not available to accounts limited to tags"), never data
 * outside its scope. Besides these rows, every route under one site (`/api/sites/:siteId/…`,
 * `/sites/:id/…`, any method) whose other parameters are all SITE_OWNED_PARAMETERS is scope-aware:
 * one check on the site answers 404 outside the scope, exactly as for an unknown id, and the
 * route's handler answers an id of another site's object exactly as an unknown id. The roles still
 * apply on top (a client is a viewer; a change needs a manager).
 */
export interface ScopeRule {
  method: string;
  path: string;
  how: string;
}

export const API_SCOPE_AWARE: readonly ScopeRule[] = [
  { method: 'GET', path: '/api/sites', how: 'lists (and searches) only the sites in scope' },
  { method: 'GET', path: '/api/tags', how: 'counts only the sites in scope' },
  { method: '*', path: '/api/tokens/*', how: 'one’s own tokens, created within one’s scope; no site' },
  // Cross-site reads: the same predicate (sites/visible-sites.ts) in each query; changes across sites stay refused.
  { method: 'GET', path: '/api/fleet/updates', how: 'pending updates of the sites in scope, counted over them' },
  { method: 'GET', path: '/api/fleet/plugins', how: 'plugins of the sites in scope, counted over them' },
  { method: 'GET', path: '/api/fleet/plugins/:slug', how: 'the sites in scope with the plugin' },
  { method: 'GET', path: '/api/fleet/themes', how: 'themes of the sites in scope, counted over them' },
  { method: 'GET', path: '/api/fleet/themes/:slug', how: 'the sites in scope with the theme' },
  { method: 'GET', path: '/api/fleet/updates/history', how: 'update attempts of the sites in scope' },
  { method: 'GET', path: '/api/jobs', how: 'jobs of the sites in scope (none without a site)' },
  { method: 'GET', path: '/api/jobs/:jobId', how: 'a job of a site in scope; any other: 404 as unknown' },
  { method: 'GET', path: '/api/fleet/actions', how: 'fleet actions all of whose sites are in scope' },
  { method: 'GET', path: '/api/fleet/actions/:actionId', how: 'all its sites in scope; else 404 as unknown' },
  { method: 'GET', path: '/api/fleet/updates/runs/:jobId', how: 'all its sites in scope; else 404 as unknown' },
];

export const DASHBOARD_SCOPE_AWARE: readonly ScopeRule[] = [
  { method: 'GET', path: '/', how: 'the overview: counts and sites in scope' },
  { method: 'GET', path: '/events', how: 'events of sites in scope' },
  { method: 'GET', path: '/settings', how: 'one’s account and tokens' },
  { method: '*', path: '/settings/account/*', how: 'one’s own password' },
  { method: '*', path: '/settings/tokens/*', how: 'one’s own tokens' },
  { method: 'GET', path: '/connector.zip', how: 'no site' },
  { method: 'POST', path: '/sign-out', how: 'one’s own session' },
  // Cross-site pages: the same filtering as the API's.
  { method: 'GET', path: '/activity', how: 'jobs of the sites in scope' },
  { method: 'GET', path: '/updates', how: 'pending updates and bulk runs of the sites in scope' },
  { method: 'GET', path: '/updates/history', how: 'update attempts of the sites in scope' },
  { method: 'GET', path: '/updates/runs/:id', how: 'all its sites in scope; else not found' },
  { method: 'GET', path: '/fleet/:kind', how: 'plugins or themes of the sites in scope' },
  { method: 'GET', path: '/fleet/:kind/:slug', how: 'the sites in scope with the item' },
  { method: 'GET', path: '/fleet/actions/:id', how: 'all its sites in scope; else not found' },
];

/**
 * The parameters a route under one site may have besides the site, each naming something of that
 * site: its handler looks it up *within* the site (`site X has no backup Y`), so another site's id
 * answers exactly as an unknown one (test/http/site-scopes.test.ts proves it for each id here, with
 * real ids of two sites). A route under a site with any other parameter stays refused to scoped
 * principals until its parameter is added here, with that test.
 */
export const SITE_OWNED_PARAMETERS: readonly string[] = [
  'auditId',
  'backupId',
  'restoreId',
  'safeUpdateId',
  'entryId',
  // Names within the site rather than ids: a plugin's or theme's slug, a safe update's screenshot.
  'slug',
  'name',
];

/** The pattern of a route under one site, and the name of its site parameter. */
const SITE_ROUTE = /^(?:\/api)?\/sites\/:(id|siteId)(?:\/|$)/;

/** The site parameter a route's pattern starts with, when its other parameters are all the site's own. */
function siteParameter(routePath: string): string | undefined {
  const match = SITE_ROUTE.exec(routePath);
  if (!match) return undefined;
  const rest = routePath.slice(match[0].length);
  if (rest.includes('*')) return undefined;
  const others = [...rest.matchAll(/:(\w+)/g)].map((parameter) => parameter[1]!);
  return others.every((parameter) => SITE_OWNED_PARAMETERS.includes(parameter)) ? match[1] : undefined;
}

/**
 * Whether a scoped principal may call the route: listed, or under one site with no parameter but
 * the site's own (any method: a change of a site in scope is allowed to a manager of that scope).
 */
export function isScopeAware(rules: readonly ScopeRule[], method: string, routePath: string): boolean {
  return rules.some((rule) => matches(rule, method, routePath)) || siteParameter(routePath) !== undefined;
}

/**
 * A change of a site's tags by a scoped principal (tags move a site between scopes): allowed only
 * when the site keeps at least one of the principal's scope tags, so no one can move a site out of
 * their own reach (or hand it to another scope alone). Throws 403 `forbidden` saying why.
 */
export function checkTagsKeepScope(access: Pick<Access, 'sites' | 'actor'>, tags: readonly string[]): void {
  if (access.sites.kind !== 'tags') return;
  const scope = access.sites.tags;
  if (tags.some((tag) => scope.includes(tag))) return;
  const who = access.actor.kind === 'token' ? 'this token is' : 'your account is';
  throw commonProblems.forbidden.create(
    `a site must keep at least one of the tags ${who} limited to (${scope.join(', ') || '(none)'}); these tags would take it out of your scope`,
  );
}

/** The refusal of a route that does not filter by scope, to a principal limited to tags. */
function scopeRefusal(access: Access, method: string, path: string) {
  const who = access.actor.kind === 'token' ? 'this token is' : 'your account is';
  return commonProblems.forbidden.create(
    `${method} ${path} is not available to accounts limited to tags (${who} limited to sites tagged ${
      access.sites.kind === 'tags' ? access.sites.tags.join(', ') || '(none)' : ''
    })`,
  );
}

/**
 * The role a request is checked as: a client is a viewer of its scope (on the routes that filter
 * by scope; the others refuse every scoped principal first).
 */
const checkedRole = (access: Access): Role => (access.role === 'client' ? 'viewer' : access.role);

/** Checks a request's site against its scope; throws (404, as for an unknown id) when outside. */
export type SiteScopeCheck = (siteId: string, access: Access) => Promise<void>;

/**
 * The whole check for one request, API and dashboard alike: the route's role, then (for a scoped
 * principal) whether the route filters by scope and whether its site is in scope. Returns the
 * refusal, or throws (rejects with) the site's 404; undefined when the request may go on.
 */
export async function checkAccess(
  c: Context,
  access: Access,
  tables: { rules: readonly PermissionRule[]; scopeAware: readonly ScopeRule[] },
  checkSite?: SiteScopeCheck,
) {
  const route = matchedRoute(c);
  if (!route) return undefined;
  const needed = requiredRole(tables.rules, route.method, route.path);
  if (!isScoped(access)) {
    return roleAtLeast(access.role, needed) ? undefined : refusal(access, needed, c.req.method, c.req.path);
  }
  // Limited to tags: only a route that filters by scope, and there a client is a viewer of its sites.
  if (!isScopeAware(tables.scopeAware, route.method, route.path)) return scopeRefusal(access, c.req.method, c.req.path);
  if (!roleAtLeast(checkedRole(access), needed)) return refusal(access, needed, c.req.method, c.req.path);
  const parameter = siteParameter(route.path);
  if (parameter) {
    // A middleware's c.req.param() is its own route's (none): the site is read from the path at the pattern's position.
    const position = route.path.split('/').indexOf(`:${parameter}`);
    const segment = c.req.path.split('/')[position];
    let siteId: string | undefined;
    try {
      siteId = segment === undefined ? undefined : decodeURIComponent(segment);
    } catch {
      siteId = segment;
    }
    if (siteId !== undefined) {
      if (!checkSite) return scopeRefusal(access, c.req.method, c.req.path);
      await checkSite(siteId, access);
    }
  }
  return undefined;
}

const matches = (rule: Pick<PermissionRule, 'method' | 'path'>, method: string, path: string) =>
  (rule.method === '*' || rule.method === method) &&
  (rule.path.endsWith('/*')
    ? path === rule.path.slice(0, -2) || path.startsWith(rule.path.slice(0, -1))
    : path === rule.path);

/** The role a route needs: its rule's, else a viewer for a read and a manager for anything else. */
export function requiredRole(rules: readonly PermissionRule[], method: string, routePath: string): Role {
  const rule = rules.find((candidate) => matches(candidate, method, routePath));
  if (rule) return rule.role;
  return method === 'GET' || method === 'HEAD' ? 'viewer' : 'manager';
}

/** The route the request will be answered by (its pattern), or undefined when none matches (404/405 follow). */
export function matchedRoute(c: Context): { method: string; path: string } | undefined {
  const route = matchedRoutes(c)
    .filter((candidate) => candidate.method !== 'ALL')
    .at(-1);
  return route && { method: route.method, path: route.path };
}

/** The refusal: `forbidden`, naming the role the route needs and the one the request has. */
export function refusal(access: Access, needed: Role, method: string, path: string) {
  const who = access.actor.kind === 'token' ? 'this token' : 'your account';
  return commonProblems.forbidden.create(
    `${method} ${path} needs the ${needed} role; ${who} has the ${access.role} role`,
  );
}

/**
 * The one permission check of the API, after authentication: the matched route's requirement
 * (API_PERMISSIONS) against the request's role, then its site scope (API_SCOPE_AWARE, and the
 * route's site through `checkSite`). Routes without `access` (the public ones) pass.
 */
export function requirePermission({
  rules = API_PERMISSIONS,
  scopeAware = API_SCOPE_AWARE,
  checkSite,
}: {
  rules?: readonly PermissionRule[];
  scopeAware?: readonly ScopeRule[];
  checkSite?: SiteScopeCheck;
} = {}): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const access = c.get('access') as Access | undefined;
    if (!access) return next();
    const refused = await checkAccess(c, access, { rules, scopeAware }, checkSite);
    if (refused) throw refused;
    return next();
  };
}
