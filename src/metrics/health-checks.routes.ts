import { Hono } from 'hono';
import type { OverloadGuard } from '../http/overload.js';
import type { Readiness, ReadinessCheck, ReadinessReport } from './readiness.js';

/**
 * Liveness and readiness for supervisors and load balancers, at the root and unauthenticated:
 * `/healthz` answers while the process serves requests; `/readyz` runs the readiness checks. Both
 * answer while the daemon sheds load (http/overload.ts): then `/healthz` stays 200 (the process is
 * alive: do not restart it) and `/readyz` is 503 with a failing `event-loop` check (send no traffic).
 */
export function createHealthCheckRoutes({
  readiness,
  checkDatabase,
  overload,
}: {
  readiness?: Readiness;
  checkDatabase: () => boolean;
  /** With it, /readyz has an `event-loop` check, failing while requests are shed. */
  overload?: Pick<OverloadGuard, 'boundMs' | 'state'>;
}) {
  const eventLoop = (): ReadinessCheck[] => {
    if (!overload) return [];
    const { lagMs, overloaded } = overload.state();
    const lag = `lags ${Math.round(lagMs)} ms (bound ${overload.boundMs} ms)`;
    return [
      {
        name: 'event-loop',
        ok: !overloaded,
        detail: overloaded ? `${lag}: the dashboard and API answer 503 overloaded` : lag,
      },
    ];
  };
  const check = (): ReadinessReport => {
    const base: ReadinessReport = readiness
      ? readiness.check()
      : (() => {
          const ok = checkDatabase();
          return { ready: ok, checks: [{ name: 'database', ok, detail: ok ? 'answers' : 'does not answer' }] };
        })();
    const checks = [...base.checks, ...eventLoop()];
    return { ready: checks.every((one) => one.ok), checks };
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
