import { afterEach, describe, expect, it } from 'vitest';
import { createScheduler } from '../../src/jobs/scheduler.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { createReadiness, sqliteWriteCheck } from '../../src/metrics/readiness.js';
import { createFakeClock } from '../../src/shared/clock.js';
import { createLogger } from '../../src/shared/logger.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const STALL_MS = 60 * 60_000;
let t: TestApp | undefined;
let stopScheduler: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stopScheduler?.();
  await t?.close();
  t = undefined;
});

/** The app with the daemon's readiness checks on its real database, a scheduler and its queues, on a fake clock. */
function readyApp() {
  const clock = createFakeClock(new Date('2026-03-02T10:00:00Z'));
  const metrics = createMetrics({ processMetrics: false });
  const scheduler = createScheduler({ logger: createLogger({ level: 'silent' }), clock });
  // A yearly expression node-cron does not fire during a test: runAll() stands for its ticks.
  scheduler.every('test-tick', '0 0 1 1 *', () => undefined);
  stopScheduler = () => scheduler.stop();
  // The checks need the app's database, the app needs the checks: they meet through this holder.
  const built: { app?: TestApp } = {};
  const readiness = createReadiness({
    clock,
    checkWritable: () => sqliteWriteCheck(built.app!.database.sqlite)(),
    scheduler,
    queues: () => metrics.queues(),
    queueStallMs: STALL_MS,
  });
  const app = (built.app = t = createTestApp({ clock, metrics, app: { readiness } }));
  return { app, clock, scheduler };
}

async function readyz(app: TestApp) {
  const response = await app.call('GET', '/readyz', { token: null });
  const failing = (response.json.checks as { name: string; ok: boolean }[])
    .filter((check) => !check.ok)
    .map((check) => check.name);
  return { status: response.status, body: response.json, failing };
}

describe('/healthz and /readyz', () => {
  it('answers liveness without a token', async () => {
    t = createTestApp();
    const response = await t.call('GET', '/healthz', { token: null });
    expect(response.status).toBe(200);
    expect(response.json).toEqual({ status: 'ok' });
  });

  it('is ready while the scheduler ticks, not before its first tick, nor when it is late or stopped', async () => {
    const { app, clock, scheduler } = readyApp();
    expect(await readyz(app)).toMatchObject({ status: 503, failing: ['scheduler'] });
    await scheduler.runAll();
    const ready = await readyz(app);
    expect(ready.status).toBe(200);
    expect(ready.body.status).toBe('ready');
    expect(ready.body.checks.map((check: { name: string }) => check.name)).toEqual([
      'database',
      'scheduler',
      'queue:site_tasks',
      'queue:uptime_probes',
      'queue:audits',
      'queue:backups',
    ]);

    clock.advance(2 * 60_000);
    expect((await readyz(app)).status).toBe(200);
    clock.advance(2 * 60_000); // four minutes without a tick: more than three periods of the minute ticks
    const late = await readyz(app);
    expect(late).toMatchObject({ status: 503, failing: ['scheduler'] });
    expect(late.body.status).toBe('unavailable');
    await scheduler.runAll();
    expect((await readyz(app)).status).toBe(200);
    await scheduler.stop();
    expect(await readyz(app)).toMatchObject({ status: 503, failing: ['scheduler'] });
  });

  it('is not ready when the database does not take writes', async () => {
    const { app, scheduler } = readyApp();
    await scheduler.runAll();
    expect((await readyz(app)).status).toBe(200);
    app.database.sqlite.pragma('query_only = 1');
    const readOnly = await readyz(app);
    expect(readOnly).toMatchObject({ status: 503, failing: ['database'] });
    expect(readOnly.body.checks[0].detail).toContain('readonly');
    app.database.sqlite.pragma('query_only = 0');
    expect((await readyz(app)).status).toBe(200);
    app.database.close();
    expect(await readyz(app)).toMatchObject({ status: 503, failing: ['database'] });
  });

  it('is not ready when a queue has work and finished nothing for the stall time', async () => {
    const { app, clock, scheduler } = readyApp();
    let release!: () => void;
    const stuck = app.services.siteQueue.run('site_stuck', () => new Promise<void>((done) => (release = done)));
    const check = async (advanceMs: number) => {
      clock.advance(advanceMs);
      await scheduler.runAll();
      return readyz(app);
    };
    expect((await check(0)).status).toBe(200);
    expect((await check(STALL_MS - 60_000)).status).toBe(200);
    const stalled = await check(2 * 60_000);
    expect(stalled).toMatchObject({ status: 503, failing: ['queue:site_tasks'] });
    expect(stalled.body.checks.find((c: { name: string }) => c.name === 'queue:site_tasks').detail).toMatch(
      /1 waiting or running, nothing finished for 3660 s/,
    );
    release();
    await stuck;
    expect((await check(0)).status).toBe(200);

    // A queue that keeps finishing tasks is not stuck, however long it stays busy.
    let next!: () => void;
    const tasks = [0, 1, 2].map(() =>
      app.services.siteQueue.run('site_busy', () => new Promise<void>((done) => (next = done))),
    );
    expect((await check(0)).status).toBe(200);
    for (const task of tasks) {
      expect((await check(STALL_MS - 1000)).status).toBe(200);
      next();
      await task;
    }
    expect((await check(STALL_MS * 2)).status).toBe(200);
  });
});
