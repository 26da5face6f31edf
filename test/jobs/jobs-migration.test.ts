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

/** An upgrade from a version without the jobs table: history shows as jobs, and recovery finds what was unfinished. */
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A database migrated as the version before the jobs table left it. */
function databaseBeforeJobs(dir: string): string {
  const migrations = join(dir, 'drizzle');
  cpSync(resolve(import.meta.dirname, '../../drizzle'), migrations, { recursive: true });
  const journalPath = join(migrations, 'meta/_journal.json');
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: { tag: string }[] };
  journal.entries = journal.entries.filter((entry) => entry.tag < '0007');
  writeFileSync(journalPath, JSON.stringify(journal));
  const path = join(dir, 'sitewarden.db');
  const sqlite = new Database(path);
  migrate(drizzle(sqlite), { migrationsFolder: migrations });
  const insert = (sql: string) => sqlite.prepare(sql).run();
  insert(
    `insert into sites (id, url, rest_url, state, created_at, updated_at) values ('site_a', 'http://127.0.0.1:1', 'http://127.0.0.1:1/wp-json/', 'connected', 1000, 1000)`,
  );
  insert(
    `insert into backups (id, site_id, kind, status, manifest_hash, files, created_at, started_at, finished_at) values ('bkp_done', 'site_a', 'manual', 'completed', '${'a'.repeat(64)}', 7, 1000, 1001, 1002)`,
  );
  insert(
    `insert into backups (id, site_id, kind, status, created_at, started_at) values ('bkp_running', 'site_a', 'scheduled', 'running', 2000, 2001)`,
  );
  insert(
    `insert into restores (id, site_id, backup_id, status, reason, error, created_at) values ('rst_failed', 'site_a', 'bkp_done', 'failed', 'site-error', 'no', 1500)`,
  );
  insert(
    `insert into performance_audits (id, site_id, url, form_factor, trigger, runs, status, queued_at) values ('perf_queued', 'site_a', 'http://127.0.0.1:1', 'desktop', 'scheduled', 2, 'queued', 3000)`,
  );
  sqlite.close();
  return path;
}

describe('upgrading to the jobs table', () => {
  it('gives every backup, restore and audit its job, in the state its own status maps to', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sitewarden-jobs-migration-'));
    dirs.push(dir);
    const database = openDatabase(databaseBeforeJobs(dir));
    try {
      const rows = database.sqlite
        .prepare('select id, kind, site_id, state, reason, message, attempts, params, progress from jobs order by id')
        .all();
      expect(rows).toEqual([
        expect.objectContaining({ id: 'bkp_done', kind: 'backup', site_id: 'site_a', state: 'succeeded', attempts: 1 }),
        expect.objectContaining({ id: 'bkp_running', kind: 'backup', state: 'running', attempts: 1 }),
        expect.objectContaining({
          id: 'perf_queued',
          kind: 'audit',
          state: 'queued',
          attempts: 0,
          params: JSON.stringify({ url: 'http://127.0.0.1:1', formFactor: 'desktop', trigger: 'scheduled', runs: 2 }),
        }),
        expect.objectContaining({
          id: 'rst_failed',
          kind: 'restore',
          state: 'failed',
          reason: 'site-error',
          message: 'no',
        }),
      ]);
      expect(JSON.parse((rows[0] as { progress: string }).progress)).toMatchObject({ files: 7 });
    } finally {
      database.close();
    }
  });

  it('lets recovery at the next start find the backup the old version left running', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sitewarden-jobs-migration-'));
    dirs.push(dir);
    const database = openDatabase(databaseBeforeJobs(dir));
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
      expect(await services.jobs.get('bkp_running')).toMatchObject({ state: 'failed', reason: 'interrupted' });
      expect(logs.events('job.interrupted')).toEqual(
        expect.arrayContaining([expect.objectContaining({ jobId: 'bkp_running', action: 'failed' })]),
      );
      await services.backups.stop(0);
    } finally {
      await services.http.close();
      database.close();
    }
  });
});
