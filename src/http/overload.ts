import type { MiddlewareHandler } from 'hono';
import { defineProblem } from '../shared/errors.js';
import { problemResponse } from './problem.js';

/**
 * Overload shedding (issue 33): when the event loop lags past a bound, the dashboard and the API
 * answer `503 overloaded` with `Retry-After` at once instead of queueing without end (200
 * concurrent overview loads once pushed API requests to a 13 s median). A refusal costs next to
 * nothing, so shedding is what lets the lag come back down. Health, readiness and metrics still
 * answer (they are what tells an operator about it), and so does the site's return from its
 * approval page (a one-time landing). Probes and scheduled work are not requests: they keep their
 * schedule whatever this says.
 */

const overloadProblems = {
  overloaded: defineProblem('overloaded', 503, 'The daemon is overloaded'),
};

/** The event loop's lag now, in milliseconds. */
export interface LagSource {
  lagMs(): number;
}

/**
 * The event loop's lag, from a sampling timer: each tick measures how late it fired. The lag read
 * between ticks is the larger of the last tick's and how overdue the next one already is, so a
 * request handled right after a long block sees that block before the timer could report it.
 * The timer is unref'd: it never keeps the process alive.
 */
export function sampleEventLoopLag({ intervalMs = 100 }: { intervalMs?: number } = {}): LagSource & {
  stop(): void;
} {
  let last = 0;
  let due = performance.now() + intervalMs;
  let timer: NodeJS.Timeout;
  const tick = () => {
    const now = performance.now();
    last = Math.max(0, now - due);
    due = now + intervalMs;
    timer = setTimeout(tick, intervalMs).unref();
  };
  timer = setTimeout(tick, intervalMs).unref();
  return {
    lagMs: () => Math.max(last, performance.now() - due),
    stop: () => clearTimeout(timer),
  };
}

let processLag: ReturnType<typeof sampleEventLoopLag> | undefined;
/** The process's one sampler, started on first use (every app in a process shares the event loop). */
const processEventLoopLag = (): LagSource => (processLag ??= sampleEventLoopLag());

export interface OverloadGuard {
  /** The lag past which requests are refused, in ms. */
  readonly boundMs: number;
  /** The lag now, and whether it is past the bound. */
  state(): { lagMs: number; overloaded: boolean };
  /** Refuses dashboard and API requests while overloaded, but for the paths that must answer. */
  middleware(): MiddlewareHandler;
}

/** Paths that answer however loaded the daemon is: supervisors, Prometheus, a site's approval landing. */
const ALWAYS_ANSWERED = ['/healthz', '/readyz', '/metrics', '/api/health'];

/** How long a refused client should wait: the lag, rounded up to seconds, 1 to 30. */
const retryAfterSeconds = (lagMs: number) => Math.min(30, Math.max(1, Math.ceil(lagMs / 1000)));

export function createOverloadGuard({
  boundMs,
  lag = processEventLoopLag(),
  alwaysAnswered = [],
  onRefused,
}: {
  boundMs: number;
  lag?: LagSource;
  /** More paths that are never refused (besides health, readiness and metrics). */
  alwaysAnswered?: readonly string[];
  /** Called for each refused request (the metrics count them). */
  onRefused?: () => void;
}): OverloadGuard {
  const exempt = new Set([...ALWAYS_ANSWERED, ...alwaysAnswered]);
  const state = () => {
    const lagMs = lag.lagMs();
    return { lagMs, overloaded: lagMs > boundMs };
  };
  return {
    boundMs,
    state,
    middleware: () => async (c, next) => {
      if (exempt.has(c.req.path)) return next();
      const { lagMs, overloaded } = state();
      if (!overloaded) return next();
      onRefused?.();
      const retryAfter = retryAfterSeconds(lagMs);
      c.header('Retry-After', String(retryAfter));
      c.header('Cache-Control', 'no-store');
      return problemResponse(
        c,
        overloadProblems.overloaded.create(
          `the daemon is overloaded (its event loop lags ${Math.round(lagMs)} ms, more than ${boundMs} ms); try again in ${retryAfter} s`,
          { retryAfterSeconds: retryAfter },
        ),
      );
    },
  };
}
