import { describe, expect, it } from 'vitest';
import { sqliteStateOf } from '../../src/db/state-db.js';
import { openDatabase } from '../../src/db/database.js';
import { createSafeUpdatesRepository } from '../../src/safe-updates/index.js';
import { storedReport } from '../../src/safe-updates/safe-updates.schemas.js';
import { createServices } from '../../src/services.js';
import { createFakeClock } from '../../src/shared/clock.js';
import { createLoggedEvents } from '../../src/shared/logger.js';
import { databaseBefore } from '../support/database-before.js';
import { createCapturedLogger } from '../support/log-capture.js';
import { testServiceConfig } from '../support/test-app.js';

/**
 * An upgrade from 0033, whose triggers (drizzle/0015) mirrored `safe_updates` into `jobs`, to 0034,
 * where the job runner writes safe updates' job rows (issue 34): every job row stays as the triggers
 * left it, a safe update's own writes no longer reach its job row (a delete still takes it along),
 * and a safe update the old version left running is queued again at the next start and resumes.
 */
type Raw = Record<string, unknown> & { id: string };

function databaseAt0033() {
  const { sqlite, path } = databaseBefore('0034');
  const run = (sql: string) => sqlite.prepare(sql).run();
  // Disconnected: a resumed safe update ends at once (its site refuses), with no network.
  run(
    `insert into sites (id, url, rest_url, state, created_at, updated_at) values ('site_a', 'http://127.0.0.1:1', 'http://127.0.0.1:1/wp-json/', 'disconnected', 1000, 1000)`,
  );
  const insert = (id: string, status: string, phase: string, more = '', values = '') =>
    run(
      `insert into safe_updates (id, site_id, item_type, slug, status, phase, policy, created_at${more}) values ('${id}', 'site_a', 'plugin', 'hello-dolly', '${status}', '${phase}', '{}', 1000${values})`,
    );
  insert('sup_1queued', 'queued', 'queued');
  insert('sup_2running', 'queued', 'queued');
  run(`update safe_updates set status = 'running', phase = 'updating', started_at = 1100 where id = 'sup_2running'`);
  run(`update safe_updates set phase = 'after-check' where id = 'sup_2running'`);
  insert('sup_3kept', 'queued', 'queued');
  run(`update safe_updates set status = 'running', started_at = 1200 where id = 'sup_3kept'`);
  run(`update safe_updates set status = 'kept', phase = 'done', finished_at = 1300 where id = 'sup_3kept'`);
  insert(
    'sup_4rolled',
    'rolled-back',
    'done',
    ', reason, message, started_at, finished_at',
    ", 'fatal-error', 'the home page fatals', 1400, 1500",
  );
  const before = sqlite.prepare(`select * from jobs order by id`).all() as Raw[];
  sqlite.close();
  return { path, before };
}

const triggersOnSafeUpdates = (sqlite: { prepare(sql: string): { all(): unknown[] } }) =>
  (
    sqlite.prepare(`select name from sqlite_master where type = 'trigger' and tbl_name = 'safe_updates'`).all() as {
      name: string;
    }[]
  ).map((row) => row.name);

describe('upgrading to safe updates whose job rows the job runner writes (0034)', () => {
  it('keeps every job row as the triggers wrote it, and drops the triggers that wrote them', () => {
    const { path, before } = databaseAt0033();
    expect(before.map((row) => [row.id, row.state, row.reason, row.progress, row.attempts])).toEqual([
      ['sup_1queued', 'queued', null, '{"phase":"queued"}', 0],
      ['sup_2running', 'running', null, '{"phase":"after-check"}', 1],
      ['sup_3kept', 'succeeded', null, '{"phase":"done"}', 1],
      ['sup_4rolled', 'failed', 'rolled-back', '{"phase":"done"}', 1],
    ]);
    const database = openDatabase(path);
    try {
      const { sqlite } = database;
      expect(sqlite.prepare(`select * from jobs order by id`).all()).toEqual(before);
      expect(triggersOnSafeUpdates(sqlite)).toEqual(['safe_updates_job_delete']);
      sqlite.prepare(`update safe_updates set status = 'failed', reason = 'x' where id = 'sup_1queued'`).run();
      expect(sqlite.prepare(`select state, reason from jobs where id = 'sup_1queued'`).get()).toEqual({
        state: 'queued',
        reason: null,
      });
      sqlite.prepare(`delete from safe_updates where id = 'sup_3kept'`).run();
      expect(sqlite.prepare(`select id from jobs where id = 'sup_3kept'`).get()).toBeUndefined();
    } finally {
      database.close();
    }
  });

  it('queues again at the next start a safe update the old version left running, logged requeued, and it resumes', async () => {
    const { path } = databaseAt0033();
    const database = openDatabase(path);
    const logs = createCapturedLogger();
    const state = sqliteStateOf(database);
    const services = createServices({
      config: testServiceConfig,
      state,
      logger: logs.logger,
      events: createLoggedEvents(logs.logger),
      clock: createFakeClock(new Date('2026-11-28T10:00:00Z')),
      secretKey: Buffer.alloc(32, 1),
    });
    try {
      // Both the queued and the running one are queued again; the running one is not failed first.
      await services.safeUpdates.recover();
      expect(logs.events('job.interrupted').map((event) => [event.jobId, event.action])).toEqual([
        ['sup_1queued', 'requeued'],
        ['sup_2running', 'requeued'],
      ]);
      expect(await services.jobs.get('sup_2running')).toMatchObject({ message: 'resumed after the daemon stopped' });
      await services.safeUpdates.idle();

      // The resumed one went straight to its after-checks (its site refused: past the update, in doubt).
      const rows = createSafeUpdatesRepository(state);
      const resumed = (await rows.find('sup_2running'))!;
      expect(storedReport(resumed).steps?.[0]).toMatchObject({ step: 'resumed', detail: 'from after-check' });
      expect(resumed.status).toBe('rollback-failed');
      expect(await services.jobs.get('sup_2running')).toMatchObject({
        state: 'failed',
        reason: 'rollback-failed',
        attempts: 2,
        progress: JSON.stringify({ phase: 'done' }),
      });
      expect(await services.jobs.get('sup_1queued')).toMatchObject({ state: 'failed', attempts: 1 });
      expect((await services.jobs.get('sup_1queued')).reason).toBe((await rows.find('sup_1queued'))!.reason);
    } finally {
      await services.safeUpdates.stop(0);
      await services.http.close();
      database.close();
    }
  });
});
