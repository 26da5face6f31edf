import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { sqliteStateOf } from '../../src/db/state-db.js';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { createServices } from '../../src/services.js';
import { createFakeClock } from '../../src/shared/clock.js';
import { createLoggedEvents } from '../../src/shared/logger.js';
import { createCapturedLogger } from '../support/log-capture.js';
import { testServiceConfig } from '../support/test-app.js';

/**
 * An upgrade from 0031, whose triggers (drizzle/0007) mirrored backups, restores and audits into
 * `jobs`, to 0033, where the job runner writes those job rows: the rows of every state stay as they
 * were (a `partial` backup's, which the trigger copied as no job state, becomes `succeeded`), the
 * triggers that wrote them are gone, and recovery still finds what was unfinished.
 */
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

type JobRowRaw = Record<string, unknown> & { id: string; state: string };

/** A database migrated as version 0031 left it, with backups, restores and audits in every state. */
function databaseAt0031(dir: string): { path: string; before: JobRowRaw[] } {
  const migrations = join(dir, 'drizzle');
  cpSync(resolve(import.meta.dirname, '../../drizzle'), migrations, { recursive: true });
  const journalPath = join(migrations, 'meta/_journal.json');
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: { tag: string }[] };
  journal.entries = journal.entries.filter((entry) => entry.tag < '0032');
  writeFileSync(journalPath, JSON.stringify(journal));
  const path = join(dir, 'sitewarden.db');
  const sqlite = new Database(path);
  migrate(drizzle(sqlite), { migrationsFolder: migrations });
  const run = (sql: string) => sqlite.prepare(sql).run();
  run(
    `insert into sites (id, url, rest_url, state, created_at, updated_at) values ('site_a', 'http://127.0.0.1:1', 'http://127.0.0.1:1/wp-json/', 'connected', 1000, 1000)`,
  );
  const hash = 'a'.repeat(64);
  // Backups: queued, running, completed, partial, failed, cancelled (while queued: the job row first, then the backup's).
  run(
    `insert into backups (id, site_id, kind, status, created_at) values ('bkp_1queued', 'site_a', 'manual', 'queued', 1000)`,
  );
  run(
    `insert into backups (id, site_id, kind, status, files, files_done, created_at, started_at) values ('bkp_2running', 'site_a', 'scheduled', 'running', 10, 4, 1100, 1101)`,
  );
  run(
    `insert into backups (id, site_id, kind, status, manifest_hash, files, files_done, bytes_stored, created_at) values ('bkp_3done', 'site_a', 'manual', 'queued', '${hash}', 0, 0, 0, 1200)`,
  );
  run(`update backups set status = 'running', started_at = 1201 where id = 'bkp_3done'`);
  run(
    `update backups set status = 'completed', files = 7, files_done = 7, bytes_stored = 99, finished_at = 1202 where id = 'bkp_3done'`,
  );
  run(
    `insert into backups (id, site_id, kind, status, reason, error, manifest_hash, targets, created_at, started_at, finished_at) values ('bkp_4partial', 'site_a', 'manual', 'partial', 'backup-target-failed', 'target s3: refused', '${hash}', '["local"]', 1300, 1301, 1302)`,
  );
  run(
    `insert into backups (id, site_id, kind, status, reason, error, created_at, started_at, finished_at) values ('bkp_5failed', 'site_a', 'manual', 'failed', 'site-unreachable', 'refused', 1400, 1401, 1402)`,
  );
  run(
    `insert into backups (id, site_id, kind, status, created_at) values ('bkp_6cancelled', 'site_a', 'manual', 'queued', 1500)`,
  );
  run(
    `update jobs set state = 'cancelled', reason = 'cancelled', message = 'cancelled on request', finished_at = 1501 where id = 'bkp_6cancelled'`,
  );
  run(
    `update backups set status = 'failed', reason = 'cancelled', error = 'cancelled on request', finished_at = 1501 where id = 'bkp_6cancelled'`,
  );
  // Restores: queued, running, completed, failed.
  run(
    `insert into restores (id, site_id, backup_id, status, created_at) values ('rst_1queued', 'site_a', 'bkp_3done', 'queued', 2000)`,
  );
  run(
    `insert into restores (id, site_id, backup_id, pre_restore_backup_id, status, created_at, started_at) values ('rst_2running', 'site_a', 'bkp_3done', 'bkp_1queued', 'running', 2100, 2101)`,
  );
  run(
    `insert into restores (id, site_id, backup_id, status, files_restored, created_at, started_at, finished_at) values ('rst_3done', 'site_a', 'bkp_3done', 'completed', 3, 2200, 2201, 2202)`,
  );
  run(
    `insert into restores (id, site_id, backup_id, status, reason, error, created_at, started_at, finished_at) values ('rst_4failed', 'site_a', 'bkp_3done', 'failed', 'site-error', 'no', 2300, 2301, 2302)`,
  );
  // Audits: queued, running, completed, failed, cancelled (the audit says failed, interrupted; its job cancelled).
  const audit = (id: string, status: string, extra = '', values = '') =>
    run(
      `insert into performance_audits (id, site_id, url, form_factor, trigger, runs, status, queued_at${extra}) values ('${id}', 'site_a', 'http://127.0.0.1:1', 'mobile', 'manual', 1, '${status}', 3000${values})`,
    );
  audit('perf_1queued', 'queued');
  audit('perf_2running', 'running', ', started_at', ', 3001');
  audit('perf_3done', 'completed', ', started_at, finished_at, score_performance', ', 3001, 3002, 0.9');
  audit(
    'perf_4failed',
    'failed',
    ', started_at, finished_at, failure_reason, failure_message',
    ", 3001, 3002, 'page_unreachable', 'refused'",
  );
  audit('perf_5cancelled', 'running', ', started_at', ', 3001');
  run(
    `update jobs set state = 'cancelled', reason = 'cancelled', message = 'cancelled on request', finished_at = 3002 where id = 'perf_5cancelled'`,
  );
  run(
    `update performance_audits set status = 'failed', failure_reason = 'interrupted', failure_message = 'cancelled on request', finished_at = 3002 where id = 'perf_5cancelled'`,
  );
  const before = sqlite.prepare('select * from jobs order by id').all() as JobRowRaw[];
  sqlite.close();
  return { path, before };
}

describe('upgrading to the job runner as the one writer of job rows (0033)', () => {
  it('keeps every job row as it was, drops the mirror triggers, and leaves feature rows to their features', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sitewarden-jobs-0033-'));
    dirs.push(dir);
    const { path, before } = databaseAt0031(dir);
    // What the triggers wrote at 0031, in every state (the partial backup's as `partial`, no job state).
    expect(before.map((row) => [row.id, row.state])).toEqual([
      ['bkp_1queued', 'queued'],
      ['bkp_2running', 'running'],
      ['bkp_3done', 'succeeded'],
      ['bkp_4partial', 'partial'],
      ['bkp_5failed', 'failed'],
      ['bkp_6cancelled', 'cancelled'],
      ['perf_1queued', 'queued'],
      ['perf_2running', 'running'],
      ['perf_3done', 'succeeded'],
      ['perf_4failed', 'failed'],
      ['perf_5cancelled', 'cancelled'],
      ['rst_1queued', 'queued'],
      ['rst_2running', 'running'],
      ['rst_3done', 'succeeded'],
      ['rst_4failed', 'failed'],
    ]);
    const database = openDatabase(path);
    try {
      const after = database.sqlite.prepare('select * from jobs order by id').all() as JobRowRaw[];
      expect(after).toEqual(before.map((row) => (row.id === 'bkp_4partial' ? { ...row, state: 'succeeded' } : row)));
      expect(after.find((row) => row.id === 'bkp_4partial')).toMatchObject({
        reason: 'backup-target-failed',
        message: 'target s3: refused',
      });
      expect(after.find((row) => row.id === 'bkp_3done')).toMatchObject({
        attempts: 1,
        started_at: 1201,
        finished_at: 1202,
      });
      expect(JSON.parse(after.find((row) => row.id === 'bkp_3done')!.progress as string)).toMatchObject({
        files: 7,
        bytesStored: 99,
      });

      const triggers = (
        database.sqlite
          .prepare(`select name from sqlite_master where type = 'trigger' and name like '%_job_%'`)
          .all() as {
          name: string;
        }[]
      )
        .map((row) => row.name)
        .sort();
      // The delete triggers stay (a deleted or cascaded row takes its job row along); safe updates' others went in 0034.
      expect(triggers).toEqual([
        'backups_job_delete',
        'performance_audits_job_delete',
        'restores_job_delete',
        'safe_updates_job_delete',
      ]);
      // A feature's write no longer reaches its job row; a delete still takes it along.
      database.sqlite.prepare(`update backups set status = 'failed', reason = 'x' where id = 'bkp_1queued'`).run();
      expect(database.sqlite.prepare(`select state from jobs where id = 'bkp_1queued'`).get()).toEqual({
        state: 'queued',
      });
      database.sqlite.prepare(`delete from backups where id = 'bkp_5failed'`).run();
      expect(database.sqlite.prepare(`select id from jobs where id = 'bkp_5failed'`).get()).toBeUndefined();
    } finally {
      database.close();
    }
  });

  it('lets recovery at the next start end what the old version left running, as before', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sitewarden-jobs-0033-'));
    dirs.push(dir);
    const database = openDatabase(databaseAt0031(dir).path);
    const logs = createCapturedLogger();
    const services = createServices({
      config: { ...testServiceConfig, dataDir: dir },
      state: sqliteStateOf(database),
      logger: logs.logger,
      events: createLoggedEvents(logs.logger),
      clock: createFakeClock(new Date('2026-11-23T10:00:00Z')),
      secretKey: Buffer.alloc(32, 1),
    });
    try {
      await services.backups.recoverInterrupted();
      expect(await services.jobs.get('bkp_2running')).toMatchObject({ state: 'failed', reason: 'interrupted' });
      expect(await services.jobs.get('rst_2running')).toMatchObject({ state: 'failed', reason: 'interrupted' });
      expect((await services.jobs.get('rst_2running')).message).toContain('not re-run automatically');
      expect(await services.jobs.get('bkp_6cancelled')).toMatchObject({ state: 'cancelled' });
      expect(logs.events('job.interrupted')).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ jobId: 'bkp_2running', action: 'failed' }),
          expect.objectContaining({ jobId: 'rst_2running', action: 'failed' }),
        ]),
      );
      expect(logs.events('backup.failed')).toEqual(
        expect.arrayContaining([expect.objectContaining({ backupId: 'bkp_2running', reason: 'interrupted' })]),
      );
      await services.performance.recover();
      expect(await services.jobs.get('perf_2running')).toMatchObject({ state: 'failed', reason: 'interrupted' });
      expect(await services.jobs.get('perf_5cancelled')).toMatchObject({ state: 'cancelled', reason: 'cancelled' });
      await services.backups.stop(0);
      await services.performance.stop();
    } finally {
      await services.http.close();
      database.close();
    }
  });
});
