import { Hono, type MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import type { Metrics } from './metrics.js';

/** `GET /metrics` in the Prometheus text format; `auth` guards it on the main listener. */
export function createMetricsRoutes({ metrics, auth }: { metrics: Metrics; auth?: MiddlewareHandler }) {
  const routes = new Hono();
  if (auth) routes.use('/metrics', auth);
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
