import cron, { type ScheduledTask } from 'node-cron';
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../shared/clock.js';

/**
 * Cron ticks only decide what is due and enqueue it; workers do the work. A tick that is still
 * running when the next one fires is skipped rather than stacked.
 */
export interface Scheduler {
  /**
   * `atStart: false`: work that is due once a period, whenever the daemon starts (a target's prune:
   * deleting under the store lock, which holds backups off), not run by `runAll`. `everyProcess`: in a
   * cluster the tick runs in each process that registers it, unclaimed (the uptime workers' probes).
   */
  every(
    name: string,
    expression: string,
    tick: () => void | Promise<void>,
    options?: { atStart?: boolean; everyProcess?: boolean },
  ): void;
  /** Runs every registered tick once now (at start-up, so nothing waits a whole period), but those registered `atStart: false`. */
  runAll(): Promise<void>;
  /** Stops the ticks and waits for those in progress. */
  stop(): Promise<void>;
  /** For readiness: when a tick last started (ms), whether the scheduler was stopped. */
  health(): { lastTickAt: number | null; stopped: boolean };
}

/**
 * Whether this process runs the tick `name` fired at `firedAt` (cluster mode: the first process to claim its
 * minute does, tick-claims.ts); on one machine there is none, and every tick runs.
 */
export type TickClaim = (name: string, firedAt: Date) => Promise<boolean>;

export function createScheduler({
  logger,
  clock = systemClock,
  claim,
}: {
  logger: Logger;
  clock?: Clock;
  claim?: TickClaim;
}): Scheduler {
  const tasks: {
    name: string;
    task: ScheduledTask;
    tick: () => void | Promise<void>;
    atStart: boolean;
    everyProcess: boolean;
  }[] = [];
  let lastTickAt: number | null = null;
  let stopped = false;
  // Ticks in progress, so a stop waits for them: nothing they do or log comes after the stop.
  const running = new Set<Promise<void>>();
  const guarded =
    (name: string, tick: () => void | Promise<void>, claimed = true) =>
    async () => {
      if (stopped) return;
      const firedAt = clock.now();
      lastTickAt = firedAt.getTime();
      const run = (async () => {
        try {
          if (claim && claimed && !(await claim(name, firedAt))) return;
          await tick();
        } catch (error) {
          logger.error({ err: error, tick: name }, 'scheduled tick failed');
        }
      })();
      running.add(run);
      await run;
      running.delete(run);
    };
  return {
    every(name, expression, tick, { atStart = true, everyProcess = false } = {}) {
      const task = cron.schedule(expression, guarded(name, tick, !everyProcess), { name, noOverlap: true });
      tasks.push({ name, task, tick, atStart, everyProcess });
    },
    async runAll() {
      for (const { name, tick, atStart, everyProcess } of tasks)
        if (atStart) await guarded(name, tick, !everyProcess)();
    },
    async stop() {
      stopped = true;
      for (const { task } of tasks) await task.destroy();
      tasks.length = 0;
      await Promise.all(running);
    },
    health: () => ({ lastTickAt, stopped }),
  };
}
