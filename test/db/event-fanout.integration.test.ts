import { resolve, join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  createEventFanout,
  EVENTS_CHANNEL,
  joinClusterEvents,
  type EventFanout,
  type FanoutEvent,
} from '../../src/db/event-fanout.js';
import { openStateDatabase, type StateDatabase } from '../../src/db/state-db.js';
import { systemClock } from '../../src/shared/clock.js';
import { createEvents } from '../../src/shared/event-bus.js';
import { postgresTestUrl } from '../support/dialects.js';
import { spawnScript, type OwnedProcess } from '../support/processes.js';
import { sleep, waitFor } from '../support/wait.js';
import type { FanoutProcessPlan } from './fixtures/event-fanout-process.js';

/**
 * Events across processes (cluster mode, src/db/event-fanout.ts) on the run's PostgreSQL: each event
 * written once and shown once to every other process, never back to its emitter; an event too long for
 * NOTIFY's payload by its id; a listening connection killed by the server made again, with what was
 * written meanwhile read back; and two real processes publishing at once while their connections are killed.
 */
const PROCESS = resolve(import.meta.dirname, 'fixtures/event-fanout-process.ts');

const event = (index: number, fields: Record<string, unknown> = {}) => ({
  event: 'backup.completed',
  level: 'info' as const,
  fields: { index, ...fields },
});

describe('the event fan-out on PostgreSQL', () => {
  let url: string;
  let state: StateDatabase;
  let admin: pg.Pool;
  const fanouts: EventFanout[] = [];
  const errors: Error[] = [];
  const scratch = mkdtempSync(join(tmpdir(), 'sitewarden-fanout-'));
  const children: OwnedProcess[] = [];

  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(stops.splice(0).map((stop) => stop()));
    await Promise.all(fanouts.map((fanout) => fanout.stop()));
    fanouts.length = 0;
    errors.length = 0;
    await admin?.query('truncate cluster_events');
  });
  afterAll(async () => {
    await Promise.all(children.map((child) => child.stop(3_000)));
    await state?.close();
    await admin?.end();
    rmSync(scratch, { recursive: true, force: true });
  });

  async function ready() {
    if (!state) {
      url = await postgresTestUrl('event-fanout');
      state = await openStateDatabase({ url, sqlitePath: ':memory:', poolSize: 4 });
      admin = new pg.Pool({ connectionString: url, max: 2 });
    }
  }

  async function started(origin: string, reconnectMs = 100) {
    const received: FanoutEvent[] = [];
    // Its statements on the pool, counted.
    const statements = { count: 0 };
    const fanout = createEventFanout({
      state: {
        ...state,
        run: (work, tx) => {
          statements.count++;
          return state.run(work, tx);
        },
      },
      connectionString: url,
      origin,
      clock: systemClock,
      onEvent: (event) => received.push(event),
      onError: (error) => errors.push(error),
      reconnectMs,
    });
    await fanout.start();
    fanouts.push(fanout);
    return { fanout, received, statements };
  }

  /** Ends the listening connections of these origins from the server's side, as a restart or a network cut would. */
  const killListeners = (origins: string[]) =>
    admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where application_name = any($1::text[])`, [
      origins.map((origin) => `sitewarden-events-${origin}`),
    ]);

  it('shows each event once to every other process and never back to its emitter; a long one goes by its id', async () => {
    await ready();
    const a = await started('api-1');
    const b = await started('api-2');
    const c = await started('worker-1');
    await a.fanout.publish(event(1));
    await b.fanout.publish({ ...event(2), message: 'with a message' });
    const long = 'x'.repeat(20_000);
    await c.fanout.publish(event(3, { long }));
    await waitFor(
      () => a.received.length === 2 && b.received.length === 2 && c.received.length === 2,
      10_000,
      () => JSON.stringify([a.received.length, b.received.length, c.received.length]),
    );
    await sleep(200);
    expect(a.received.map((received) => received.fields.index)).toEqual([2, 3]);
    expect(b.received.map((received) => received.fields.index)).toEqual([1, 3]);
    expect(c.received.map((received) => received.fields.index)).toEqual([1, 2]);
    expect(c.received[1]).toEqual({
      origin: 'api-2',
      event: 'backup.completed',
      level: 'info',
      fields: { index: 2 },
      message: 'with a message',
    });
    expect(a.received[1]!.fields.long).toBe(long);
    // The long one read back by the others, not by its emitter, which showed it already: its one statement wrote it.
    expect(c.statements.count).toBe(1);
    expect(a.statements.count).toBe(2);
    const { rows } = await admin.query('select origin, event, fields from cluster_events order by id');
    expect(rows.map((row: { origin: string }) => row.origin)).toEqual(['api-1', 'api-2', 'worker-1']);
    expect(errors).toEqual([]);
  });

  it('joins each process’s bus: every process’s events reach the live subscribers, its own subscribers only its own', async () => {
    await ready();
    const joined = async (origin: string) => {
      const events = createEvents();
      const live: string[] = [];
      const local: string[] = [];
      events.subscribe((published) => live.push(`${published.event}#${String(published.fields.siteId)}`), {
        everywhere: true,
      });
      events.subscribe((published) => local.push(`${published.event}#${String(published.fields.siteId)}`));
      const cluster = joinClusterEvents({
        events,
        state,
        connectionString: url,
        origin,
        clock: systemClock,
        onError: (error) => errors.push(error),
      });
      await cluster.start();
      stops.push(() => cluster.stop());
      return { events, live, local };
    };
    const api = await joined('api-1');
    const worker = await joined('worker-1');
    const down = (siteId: string) => ({
      siteId,
      url: `https://${siteId}.test`,
      cause: 'timeout',
      firstFailureAt: '2026-11-29T00:00:00.000Z',
    });
    worker.events.emit('site.down', down('site_1'));
    worker.events.emit('site.up', {
      siteId: 'site_1',
      url: 'https://site_1.test',
      downtimeMs: 3_000,
      downSince: '2026-11-29T00:00:00.000Z',
    });
    api.events.emit('site.down', down('site_2'));
    await waitFor(
      () => api.live.length === 3 && worker.live.length === 3,
      10_000,
      () => JSON.stringify({ api: api.live, worker: worker.live }),
    );
    await sleep(200);
    // In the order each process emitted them, each once; its own at once, the other's when published.
    expect(worker.live).toEqual(['site.down#site_1', 'site.up#site_1', 'site.down#site_2']);
    expect(api.live.filter((line) => line.endsWith('site_1'))).toEqual(['site.down#site_1', 'site.up#site_1']);
    expect(api.live).toHaveLength(3);
    // The emitter's own subscribers (audit, webhooks, the log) only ever see its own events.
    expect(worker.local).toEqual(['site.down#site_1', 'site.up#site_1']);
    expect(api.local).toEqual(['site.down#site_2']);
    expect(errors).toEqual([]);
  });

  it('listens again after its connection is killed, and reads back what was written meanwhile, once', async () => {
    await ready();
    const listener = await started('api-1', 300);
    const emitter = await started('worker-1');
    await emitter.fanout.publish(event(1));
    await waitFor(
      () => listener.received.length === 1,
      10_000,
      () => 'the first event',
    );
    await killListeners(['api-1']);
    // Written while api-1 listens on nothing.
    for (let index = 2; index <= 5; index++) await emitter.fanout.publish(event(index));
    await waitFor(
      () => listener.received.length === 5,
      10_000,
      () => `five events, got ${listener.received.length}`,
    );
    await emitter.fanout.publish(event(6));
    await waitFor(
      () => listener.received.length === 6,
      10_000,
      () => 'the sixth event',
    );
    expect(listener.received.map((received) => received.fields.index)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(errors.map((error) => error.message)).toEqual([
      expect.stringContaining('the event fan-out lost its listening connection'),
    ]);
  });

  it('reports a notification of the wrong shape and goes on', async () => {
    await ready();
    const listener = await started('api-1');
    await admin.query(`select pg_notify($1, $2)`, [EVENTS_CHANNEL, '{"id":"not a number"}']);
    await admin.query(`select pg_notify($1, $2)`, [EVENTS_CHANNEL, 'not json']);
    const emitter = await started('worker-1');
    await emitter.fanout.publish(event(1));
    await waitFor(
      () => listener.received.length === 1,
      10_000,
      () => 'the event after the bad ones',
    );
    expect(errors.map((error) => error.message)).toEqual([
      expect.stringContaining('an event notification of the wrong shape'),
      expect.stringContaining('an event notification of the wrong shape'),
    ]);
  });

  it(
    'gives two real processes every event of the other once while their connections are killed',
    { timeout: 90_000 },
    async () => {
      await ready();
      const events = 400;
      await admin.query('create table fanout_received (process text, origin text, seq int)');
      const spawn = (origin: string) => {
        const plan: FanoutProcessPlan = { url, origin, events, everyMs: 5 };
        const child = spawnScript(PROCESS, {
          logFile: join(scratch, `${origin}.log`),
          planVariable: 'EVENT_FANOUT_PROCESS',
          plan,
        });
        children.push(child);
        return child;
      };
      const one = spawn('proc-1');
      const two = spawn('proc-2');
      await waitFor(
        () => one.outputTail().includes('listening') && two.outputTail().includes('listening'),
        60_000,
        () => `both processes listening\n${one.outputTail()}\n${two.outputTail()}`,
      );
      await admin.query(`select pg_notify('fanout_go', '')`);
      // Twice mid-stream, both listeners cut off.
      await sleep(600);
      await killListeners(['proc-1', 'proc-2']);
      await sleep(600);
      await killListeners(['proc-1', 'proc-2']);
      await waitFor(
        async () =>
          Number((await admin.query('select count(*)::int as n from fanout_received')).rows[0].n) === 2 * events,
        60_000,
        () => `every event received\n${one.outputTail()}\n${two.outputTail()}`,
      );
      await sleep(500);
      const { rows } = await admin.query<{ process: string; origin: string; seq: number }>(
        'select process, origin, seq from fanout_received order by ctid',
      );
      for (const [receiver, sender] of [
        ['proc-1', 'proc-2'],
        ['proc-2', 'proc-1'],
      ]) {
        const got = rows.filter((row) => row.process === receiver).map((row) => row.seq);
        expect(rows.filter((row) => row.process === receiver).every((row) => row.origin === sender)).toBe(true);
        expect(new Set(got).size).toBe(events);
        expect(got.length).toBe(events);
      }
      expect(one.outputTail()).toContain('lost its listening connection');
    },
  );
});
