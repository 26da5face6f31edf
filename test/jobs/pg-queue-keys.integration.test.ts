import { describe, expect, it } from 'vitest';
import { QUEUE_SCHEMA } from '../../src/jobs/pg-queue.js';
import { jobRow, send, sleep, spec, useQueueHarness, waitFor } from './fixtures/pg-queue-harness.js';
import type { TestJobData } from './fixtures/pg-queue-runs.js';

/**
 * The cluster-mode queue's singleton keys (a `stately` queue) and cron schedules (one job per slot
 * whichever instance looks), over pg-boss 10.x on the run's throwaway PostgreSQL.
 */
const { freshDatabase, startQueue } = useQueueHarness();

describe('singleton keys and cron schedules', () => {
  it(
    'refuses a second job of a key while one is queued on a stately queue; a standard queue does not enforce keys',
    { timeout: 60_000 },
    async () => {
      const { url, pool } = await freshDatabase('queue-singleton');
      const queue = await startQueue(url, [spec('backups', { policy: 'stately' }), spec('audits')]);
      const first = await send(queue, 'backups', { label: 'k1-a' }, { singletonKey: 'site:s1' });
      expect(first).toEqual(expect.any(String));
      expect(await send(queue, 'backups', { label: 'k1-b' }, { singletonKey: 'site:s1' })).toBeNull();
      expect(await send(queue, 'backups', { label: 'k2' }, { singletonKey: 'site:s2' })).toEqual(expect.any(String));

      // Once the first runs, one more of its key may queue behind it (stately: one per state), not two.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      await queue.work<TestJobData>('backups', async (job) => {
        if (job.data.label === 'k1-a') await held;
      });
      await waitFor(
        async () => (await jobRow(pool, 'backups', first!))?.state === 'active',
        30_000,
        () => 'k1-a running',
      );
      expect(await send(queue, 'backups', { label: 'k1-c' }, { singletonKey: 'site:s1' })).toEqual(expect.any(String));
      expect(await send(queue, 'backups', { label: 'k1-d' }, { singletonKey: 'site:s1' })).toBeNull();
      release();

      const { rows } = await pool.query<{ label: string }>(
        `SELECT data->>'label' AS label FROM ${QUEUE_SCHEMA}.job WHERE name = 'backups' ORDER BY created_on`,
      );
      expect(rows.map((row) => row.label)).toEqual(['k1-a', 'k2', 'k1-c']);

      expect(await send(queue, 'audits', { label: 'x' }, { singletonKey: 'site:s1' })).toEqual(expect.any(String));
      expect(await send(queue, 'audits', { label: 'y' }, { singletonKey: 'site:s1' })).toEqual(expect.any(String));
    },
  );

  it(
    'sends one job per cron slot whichever of two instances looks, each looking every second',
    { timeout: 60_000 },
    async () => {
      const { url, pool } = await freshDatabase('queue-cron');
      const specs = [spec('backup-checks')];
      const cron = { schedule: true, cronMonitorIntervalSeconds: 1 };
      const one = await startQueue(url, specs, cron);
      const two = await startQueue(url, specs, cron);
      await one.schedule('backup-checks', '* * * * *', { label: 'tick' }, { tz: 'Europe/Amsterdam' });
      await two.schedule('backup-checks', '* * * * *', { label: 'tick' }, { tz: 'Europe/Amsterdam' });
      await waitFor(
        async () => (await pool.query(`SELECT 1 FROM ${QUEUE_SCHEMA}.job WHERE name = 'backup-checks'`)).rowCount! > 0,
        30_000,
        () => 'the first scheduled job',
      );
      // Both instances keep looking, each every second, for a while.
      await sleep(6_000);
      const count = async (sql: string) => (await pool.query(sql)).rowCount ?? 0;
      const slotsSql = `SELECT singleton_on FROM ${QUEUE_SCHEMA}.job WHERE name = '__pgboss__send-it' AND singleton_key = 'backup-checks'`;
      const sentSql = `SELECT 1 FROM ${QUEUE_SCHEMA}.job WHERE name = 'backup-checks'`;
      // A slot's job reaches the queue when an instance's internal worker passes it on (within seconds).
      await waitFor(
        async () => (await count(sentSql)) === (await count(slotsSql)),
        20_000,
        () => 'every slot passed on',
      );
      const slots = (await pool.query<{ singleton_on: Date }>(slotsSql)).rows.map((row) => row.singleton_on.getTime());
      // One job per minute slot the window touched (one, or two when it crossed a minute), never two in one slot.
      expect(new Set(slots).size).toBe(slots.length);
      expect(slots.length).toBeGreaterThanOrEqual(1);
      expect(slots.length).toBeLessThanOrEqual(2);
      const sent = await pool.query(`SELECT data FROM ${QUEUE_SCHEMA}.job WHERE name = 'backup-checks'`);
      expect(sent.rowCount).toBe(slots.length);
      expect(sent.rows[0]).toEqual({ data: { label: 'tick' } });
    },
  );
});
