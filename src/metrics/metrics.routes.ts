import { Hono, type MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import { refusal } from '../http/permissions.js';
import { roleAtLeast, type Access } from '../shared/actor.js';
import { commonProblems } from '../shared/errors.js';
import type { Metrics } from './metrics.js';

/**
 * The figures are fleet-wide (sites by state, every queue, every route's latency): on the main
 * listener they need a token of at least the viewer role whose scope is every site. A `client`
 * token, or one limited to some sites, gets `403 forbidden`.
 */
const fleetWideReader: MiddlewareHandler = async (c, next) => {
  const access = c.get('access') as Access | undefined;
  if (!access) throw commonProblems.unauthorized.create('send an API token as `Authorization: Bearer <token>`');
  if (!roleAtLeast(access.role, 'viewer')) throw refusal(access, 'viewer', c.req.method, c.req.path);
  if (access.sites.kind !== 'all')
    throw commonProblems.forbidden.create('GET /metrics shows the whole fleet; this token is limited to some sites');
  return next();
};

/** `GET /metrics` in the Prometheus text format; `auth` guards it on the main listener (a viewer or above). */
export function createMetricsRoutes({ metrics, auth }: { metrics: Metrics; auth?: MiddlewareHandler }) {
  const routes = new Hono();
  if (auth) routes.use('/metrics', auth, fleetWideReader);
  routes.get('/metrics', async (c) =>
    c.body(await metrics.render(), 200, { 'Content-Type': metrics.contentType, 'Cache-Control': 'no-store' }),
  );
  return routes;
}

/**
 * Each request's latency by method, route pattern (`/api/sites/:id`, never the path itself, so
 * the label set stays bounded) and status class. Requests no route matched share `unmatched`.
 */
export function requestMetrics(metrics: Metrics): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const route = routePath(c, -1);
      metrics.observeRequest(
        c.req.method,
        route.endsWith('*') ? 'unmatched' : route,
        c.res.status,
        (performance.now() - started) / 1000,
      );
    }
  };
}
