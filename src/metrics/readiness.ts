import type Database from 'better-sqlite3';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../db/dialect.js';
import type { StateDatabase } from '../db/state-db.js';
import type { Clock } from '../shared/clock.js';
import type { QueueName } from './metrics.js';

export interface ReadinessCheck {
  name: string;
  ok: boolean;
  detail: string;
}

export interface ReadinessReport {
  ready: boolean;
  checks: ReadinessCheck[];
}

export interface ReadinessDeps {
  clock: Clock;
  /** Proves the database takes writes; throws when it does not. */
  checkWritable: () => void;
  scheduler: { health(): { lastTickAt: number | null; stopped: boolean } };
  queues: () => Record<QueueName, { depth: number; completed: number }>;
  /** The scheduler is late after this long without a tick (three periods of the minute ticks). */
  schedulerStaleMs?: number;
  /** A queue with work that finished nothing for this long is stuck. */
  queueStallMs: number;
}

const SCHEDULER_STALE_MS = 3 * 60_000;

/**
 * /readyz's checks: the database takes a write, the scheduler ticks, no queue is stuck. Each is
 * cheap (no site is read); a queue's progress is remembered between calls, so "stuck" means
 * work waiting and no task finished since the first check that saw it so.
 */
export function createReadiness(deps: ReadinessDeps) {
  const schedulerStaleMs = deps.schedulerStaleMs ?? SCHEDULER_STALE_MS;
  /** Per queue: the completed count last seen with work waiting, and since when it has not moved. */
  const watched = new Map<QueueName, { completed: number; since: number }>();

  function database(): ReadinessCheck {
    try {
      deps.checkWritable();
      return { name: 'database', ok: true, detail: 'takes writes' };
    } catch (error) {
      return {
        name: 'database',
        ok: false,
        detail: `does not take writes: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
  }

  function scheduler(now: number): ReadinessCheck {
    const { lastTickAt, stopped } = deps.scheduler.health();
    if (stopped) return { name: 'scheduler', ok: false, detail: 'stopped' };
    if (lastTickAt === null) return { name: 'scheduler', ok: false, detail: 'has not ticked yet' };
    const ageMs = now - lastTickAt;
    if (ageMs > schedulerStaleMs)
      return { name: 'scheduler', ok: false, detail: `last ticked ${Math.round(ageMs / 1000)} s ago` };
    return { name: 'scheduler', ok: true, detail: `last ticked ${Math.round(ageMs / 1000)} s ago` };
  }

  function queues(now: number): ReadinessCheck[] {
    return Object.entries(deps.queues()).map(([name, { depth, completed }]) => {
      const queue = name as QueueName;
      const seen = watched.get(queue);
      if (depth === 0) {
        watched.delete(queue);
        return { name: `queue:${queue}`, ok: true, detail: 'empty' };
      }
      if (!seen || seen.completed !== completed) {
        watched.set(queue, { completed, since: now });
        return { name: `queue:${queue}`, ok: true, detail: `${depth} waiting or running` };
      }
      const stalledMs = now - seen.since;
      const ok = stalledMs <= deps.queueStallMs;
      return {
        name: `queue:${queue}`,
        ok,
        detail: `${depth} waiting or running, nothing finished for ${Math.round(stalledMs / 1000)} s`,
      };
    });
  }

  return {
    check(): ReadinessReport {
      const now = deps.clock.now().getTime();
      const checks = [database(), scheduler(now), ...queues(now)];
      return { ready: checks.every((check) => check.ok), checks };
    },
  };
}

export type Readiness = ReturnType<typeof createReadiness>;

/**
 * A real write that leaves nothing behind: inside a transaction, rewrite the header's
 * user_version with its own value and roll back (about 10 µs; a read-only database or file
 * fails it). Waits at most `waitMs` for another process holding the write lock, not the
 * connection's long busy timeout: the connection is synchronous, waiting blocks the daemon.
 */
export function sqliteWriteCheck(sqlite: Database.Database, waitMs = 100): () => void {
  return () => {
    if (sqlite.inTransaction) return; // a write is under way on this very connection
    const previous = sqlite.pragma('busy_timeout', { simple: true }) as number;
    sqlite.pragma(`busy_timeout = ${waitMs}`);
    try {
      const version = sqlite.pragma('user_version', { simple: true }) as number;
      sqlite.exec('BEGIN IMMEDIATE');
      try {
        sqlite.pragma(`user_version = ${version}`);
      } finally {
        sqlite.exec('ROLLBACK');
      }
    } finally {
      if (sqlite.open) sqlite.pragma(`busy_timeout = ${previous}`);
    }
  };
}

/** How often the PostgreSQL check asks, and how old its last answer may be before the database counts as gone. */
const PG_CHECK_EVERY_MS = 5_000;
const PG_CHECK_STALE_MS = 3 * PG_CHECK_EVERY_MS;

/**
 * The database checks in cluster mode: PostgreSQL is asked in the background (every few seconds, whether it
 * takes writes: not a standby in recovery), since /healthz and /readyz answer at once; a check fails when the
 * last answer was a failure or is too old (a request that hangs). `stop` ends the asking.
 */
export function postgresChecks(state: StateDatabase, clock: Clock) {
  let answeredAt = clock.now().getTime();
  let problem: string | null = 'not asked yet';
  const ask = async () => {
    try {
      const [row] = await state.run((db) =>
        rowsOf<{ writable: boolean }>(state, db, sql`select not pg_is_in_recovery() as writable`),
      );
      problem = row?.writable ? null : 'the server is a standby in recovery';
    } catch (error) {
      problem = error instanceof Error ? error.message : String(error);
    }
    answeredAt = clock.now().getTime();
  };
  const timer = setInterval(() => void ask(), PG_CHECK_EVERY_MS);
  timer.unref();
  const asked = ask();
  const failure = (): string | null =>
    clock.now().getTime() - answeredAt > PG_CHECK_STALE_MS ? 'PostgreSQL has not answered lately' : problem;
  return {
    /** The first answer (a start waits for it, so /readyz does not begin unready). */
    asked,
    checkWritable: (): void => {
      const why = failure();
      if (why) throw new Error(why);
    },
    checkDatabase: (): boolean => failure() === null,
    stop: (): void => clearInterval(timer),
  };
}
