import type { Context, MiddlewareHandler } from 'hono';
import { clientAddress } from '../http/client-address.js';
import { matchedRoute } from '../http/permissions.js';
import { PROBLEM_CONTENT_TYPE } from '../http/problem.js';
import type { Access, Actor } from '../shared/actor.js';
import { isAppError, problemType } from '../shared/errors.js';
import { outcomeOfStatus, type AuditLogService, type AuditRecord } from './audit-log.service.js';
import type { AuditSource } from './audit-log.table.js';

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const MAX_PARAM = 200;

/** What the authentication middlewares left on the request (http/auth.ts, dashboard/session.ts), read loosely. */
interface AuditedVariables {
  actor?: Actor;
  access?: Access;
  token?: { name: string };
  session?: { user: { username: string } };
}

/** The route pattern's parameters (`:siteId`) and their values in the request's path, in order. */
function paramsOf(pattern: string, path: string): [name: string, value: string][] {
  const names = pattern.split('/');
  const values = path.split('/');
  const params: [string, string][] = [];
  names.forEach((segment, i) => {
    if (!segment.startsWith(':') || values[i] === undefined) return;
    let value = values[i]!;
    try {
      value = decodeURIComponent(value);
    } catch {
      // kept as sent
    }
    params.push([
      segment
        .slice(1)
        .replace(/\{.*\}$/, '')
        .replace(/\?$/, ''),
      value.slice(0, MAX_PARAM),
    ]);
  });
  return params;
}

const singular = (word: string) =>
  word.endsWith('ies') ? `${word.slice(0, -3)}y` : word.endsWith('s') ? word.slice(0, -1) : word;
const kebab = (name: string) => name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);

/**
 * The site a route acts on: its `:siteId`, or the `:id` of a `/sites/:id…` (dashboard) or
 * `/api/sites/:id…` route. The target: the route's last parameter, its kind named by the parameter
 * (`:backupId` → `backup`) or, for `:id`, `:slug` and `:name`, by the path segment before it
 * (`/tokens/:id` → `token`, `/plugins/:slug` → `plugin`).
 */
function siteAndTarget(
  pattern: string,
  path: string,
): { siteId: string | null; target: { kind: string; id: string } | null } {
  const params = paramsOf(pattern, path);
  const named = new Map(params);
  const siteId = named.get('siteId') ?? (/^(\/api)?\/sites\/:id(\/|$)/.test(pattern) ? named.get('id') : undefined);
  const last = params.at(-1);
  if (!last) return { siteId: siteId ?? null, target: null };
  const [name, id] = last;
  let kind: string;
  if (name === 'id' || name === 'slug' || name === 'name') {
    const segments = pattern.split('/');
    const before = segments[segments.indexOf(`:${name}`) - 1] ?? name;
    kind = singular(before.startsWith(':') ? name : before);
  } else kind = kebab(name.endsWith('Id') ? name.slice(0, -2) : name);
  return { siteId: siteId ?? null, target: { kind, id } };
}

/** The answer's problem type: the error that became it, else the document's own `type`. */
async function problemOf(c: Context): Promise<string | null> {
  if (isAppError(c.error)) return problemType(c.error.problem.name);
  if (!c.res.headers.get('content-type')?.startsWith(PROBLEM_CONTENT_TYPE)) return null;
  try {
    const body = (await c.res.clone().json()) as { type?: unknown };
    return typeof body.type === 'string' ? body.type : null;
  } catch {
    return null;
  }
}

/**
 * Records every state-changing request (anything but GET, HEAD, OPTIONS) that reached a route,
 * after its answer is decided, so the status is known and no route can forget: who (the token or
 * user, by id and by their name at the time), from which address, the method and the matched
 * route's pattern, the site and target from the route's parameters, the status and problem type.
 * Never a body, a query string or a header. A request without a valid credential is recorded only
 * when `anonymous(c)` says so (the API: a refused bearer token; the dashboard: a refused form).
 * `failed(c)`: an answer that reads ok but reports a failure (the dashboard's error flash).
 */
export function auditRequests({
  auditLog,
  source,
  anonymous,
  failed = () => false,
}: {
  auditLog: Pick<AuditLogService, 'record'>;
  source: AuditSource;
  anonymous: (c: Context) => boolean;
  failed?: (c: Context) => boolean;
}): MiddlewareHandler {
  return async (c, next) => {
    if (READ_METHODS.has(c.req.method)) return next();
    await next();
    const route = matchedRoute(c);
    if (!route) return; // no such route: 404 or 405, nothing was done
    const variables = c as unknown as Context<{ Variables: AuditedVariables }>;
    const actor = variables.get('actor');
    const status = c.res.status;
    if (!actor && !anonymous(c)) return;
    const name = variables.get('token')?.name ?? variables.get('session')?.user.username ?? null;
    const outcome = outcomeOfStatus(status);
    const entry: AuditRecord = {
      source,
      actor: actor ? { kind: actor.kind, id: actor.id, name } : null,
      userId: variables.get('access')?.userId ?? null,
      address: clientAddress(c),
      method: c.req.method,
      action: route.path,
      ...siteAndTarget(route.path, c.req.path),
      status,
      outcome: outcome === 'ok' && failed(c) ? 'failed' : outcome,
      problem: status >= 400 ? await problemOf(c) : null,
    };
    await auditLog.record(entry);
  };
}
