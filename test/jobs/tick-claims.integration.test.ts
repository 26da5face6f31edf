import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createScheduler } from '../../src/jobs/scheduler.js';
import { createTickClaims } from '../../src/jobs/tick-claims.js';
import { createFakeClock } from '../../src/shared/clock.js';
import { stateDatabaseFor } from '../support/dialects.js';

/** Cron with one leader in a cluster (issue 34): a tick's minute is run by the first process to claim it. */
describe('scheduled tick claims on PostgreSQL', () => {
  const state = stateDatabaseFor('postgres', 'tick-claims');
  const at = (iso: string) => new Date(`2026-11-29T${iso}Z`);

  it('gives each tick’s minute to one process, whichever second it fired at', async () => {
    const clock = createFakeClock(at('10:00:00'));
    const a = createTickClaims({ state: state(), processId: 'a', clock });
    const b = createTickClaims({ state: state(), processId: 'b', clock });
    expect(await a('backups', at('10:00:01'))).toBe(true);
    expect(await b('backups', at('10:00:59'))).toBe(false);
    expect(await a('backups', at('10:00:30'))).toBe(false);
    // Another minute, another tick: each its own.
    expect(await b('backups', at('10:01:00'))).toBe(true);
    expect(await b('audit-log-retention', at('10:00:02'))).toBe(true);
  });

  it('runs a tick in one of two schedulers that fire it together, and in the other once the first is gone', async () => {
    const clock = createFakeClock(at('11:00:00'));
    const ran: string[] = [];
    const schedulerOf = (processId: string) => {
      const scheduler = createScheduler({
        logger: pino({ level: 'silent' }),
        clock,
        claim: createTickClaims({ state: state(), processId, clock }),
      });
      scheduler.every('site-sync', '* * * * *', () => void ran.push(processId));
      return scheduler;
    };
    const first = schedulerOf('first');
    const second = schedulerOf('second');
    await Promise.all([first.runAll(), second.runAll()]);
    expect(ran).toHaveLength(1);
    await first.stop();
    clock.advance(60_000);
    await second.runAll();
    expect(ran).toEqual([ran[0], 'second']);
    await second.stop();
  });

  it('runs an every-process tick (the uptime workers’ probes) in each scheduler, unclaimed', async () => {
    const clock = createFakeClock(at('13:00:00'));
    const ran: string[] = [];
    const schedulers = ['first', 'second'].map((processId) => {
      const scheduler = createScheduler({
        logger: pino({ level: 'silent' }),
        clock,
        claim: createTickClaims({ state: state(), processId, clock }),
      });
      scheduler.every('uptime-probes', '* * * * * *', () => void ran.push(processId), { everyProcess: true });
      return scheduler;
    });
    await Promise.all(schedulers.map((scheduler) => scheduler.runAll()));
    await Promise.all(schedulers.map((scheduler) => scheduler.runAll()));
    expect(ran.sort()).toEqual(['first', 'first', 'second', 'second']);
    await Promise.all(schedulers.map((scheduler) => scheduler.stop()));
  });

  it('forgets claims a day old', async () => {
    const clock = createFakeClock(at('12:00:00'));
    const claim = createTickClaims({ state: state(), processId: 'a', clock });
    expect(await claim('uptime-maintenance', at('12:00:00'))).toBe(true);
    clock.advance(25 * 60 * 60_000);
    // The first claim of a process prunes; the old row is gone, so that minute could be claimed again.
    expect(await claim('uptime-maintenance', clock.now())).toBe(true);
    expect(await claim('uptime-maintenance', at('12:00:00'))).toBe(true);
  });
});
