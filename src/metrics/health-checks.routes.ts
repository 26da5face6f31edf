import { Hono } from 'hono';
import type { Readiness, ReadinessReport } from './readiness.js';

/**
 * Liveness and readiness for supervisors and load balancers, at the root and unauthenticated:
 * `/healthz` answers while the process serves requests; `/readyz` runs the readiness checks.
 */
export function createHealthCheckRoutes({
  readiness,
  checkDatabase,
}: {
  readiness?: Readiness;
  checkDatabase: () => boolean;
}) {
  const check = (): ReadinessReport => {
    if (readiness) return readiness.check();
    const ok = checkDatabase();
    return { ready: ok, checks: [{ name: 'database', ok, detail: ok ? 'answers' : 'does not answer' }] };
  };
  return new Hono()
    .get('/healthz', (c) => c.json({ status: 'ok' }, 200, { 'Cache-Control': 'no-store' }))
    .get('/readyz', (c) => {
      const { ready, checks } = check();
      return c.json({ status: ready ? 'ready' : 'unavailable', checks }, ready ? 200 : 503, {
        'Cache-Control': 'no-store',
      });
    });
}
