import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import { roleAtLeast, type Access, type Role } from '../shared/actor.js';
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
];

/** The dashboard's exceptions (its forms post to dashboard routes, never to /api). */
export const DASHBOARD_PERMISSIONS: readonly PermissionRule[] = [
  { method: '*', path: '/settings/account/*', role: 'client', why: 'one’s own password' },
  { method: 'POST', path: '/settings/tokens/*', role: 'viewer', why: 'one’s own tokens' },
  { method: 'POST', path: '/settings/users/*', role: 'owner', why: 'users and their roles' },
  { method: 'POST', path: '/settings/webhooks/*', role: 'owner', why: 'webhooks' },
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

const matches = (rule: PermissionRule, method: string, path: string) =>
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
 * (API_PERMISSIONS) against the request's role. Routes without `access` (the public ones) pass.
 */
export function requirePermission(rules: readonly PermissionRule[] = API_PERMISSIONS): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const access = c.get('access') as Access | undefined;
    const route = matchedRoute(c);
    if (!access || !route) return next();
    const needed = requiredRole(rules, route.method, route.path);
    if (!roleAtLeast(access.role, needed)) throw refusal(access, needed, c.req.method, c.req.path);
    return next();
  };
}
