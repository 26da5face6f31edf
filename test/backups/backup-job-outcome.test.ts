import { describe, expect, it } from 'vitest';
import { backupJobParams, backupOutcome, restoreOutcome } from '../../src/backups/backup-job-rows.js';
import type { BackupRow, RestoreRow } from '../../src/backups/backups.table.js';

/** How a backup's or restore's job ends, from the feature's own row: what the job runner writes to the job row. */
const at = new Date('2026-11-23T10:00:00Z');
const backup = (changes: Partial<BackupRow>): BackupRow => ({
  id: 'bkp_1',
  siteId: 'site_a',
  kind: 'manual',
  status: 'completed',
  reason: null,
  error: null,
  manifestHash: 'a'.repeat(64),
  targets: ['local'],
  retryOf: null,
  files: 7,
  filesDone: 7,
  tables: 2,
  tablesDone: 2,
  rows: 10,
  bytesTotal: 100,
  bytesTransferred: 90,
  bytesStored: 80,
  createdAt: at,
  startedAt: at,
  finishedAt: at,
  ...changes,
});

describe('a backup’s job outcome', () => {
  it('is succeeded for a completed backup, with its counts as progress and its end time', () => {
    expect(backupOutcome(backup({}))).toEqual({
      state: 'succeeded',
      reason: null,
      message: null,
      progress: {
        files: 7,
        filesDone: 7,
        tables: 2,
        tablesDone: 2,
        rows: 10,
        bytesTotal: 100,
        bytesTransferred: 90,
        bytesStored: 80,
      },
      finishedAt: at,
    });
    expect(backupJobParams({ kind: 'scheduled' })).toEqual({ kind: 'scheduled', retryOf: null });
  });

  it('is succeeded with its reason for a partial one (held whole locally), a job state unlike the trigger’s `partial`', () => {
    expect(
      backupOutcome(backup({ status: 'partial', reason: 'backup-target-failed', error: 'target s3: refused' })),
    ).toMatchObject({ state: 'succeeded', reason: 'backup-target-failed', message: 'target s3: refused' });
  });

  it('is failed with the backup’s reason, or cancelled when it was cancelled', () => {
    expect(backupOutcome(backup({ status: 'failed', reason: 'interrupted', error: 'stopped' }))).toMatchObject({
      state: 'failed',
      reason: 'interrupted',
      message: 'stopped',
    });
    expect(
      backupOutcome(backup({ status: 'failed', reason: 'cancelled', error: 'cancelled on request' })),
    ).toMatchObject({ state: 'cancelled', reason: 'cancelled' });
  });
});

describe('a restore’s job outcome', () => {
  it('is succeeded when completed, failed with its reason otherwise', () => {
    const restore: RestoreRow = {
      id: 'rst_1',
      siteId: 'site_a',
      backupId: 'bkp_1',
      sourceTarget: null,
      preRestoreBackupId: 'bkp_2',
      status: 'completed',
      reason: null,
      error: null,
      filesRestored: 3,
      filesDeleted: 1,
      tablesRestored: 2,
      bytesTransferred: 50,
      createdAt: at,
      startedAt: at,
      finishedAt: at,
    };
    expect(restoreOutcome(restore)).toEqual({
      state: 'succeeded',
      reason: null,
      message: null,
      progress: { filesRestored: 3, filesDeleted: 1, tablesRestored: 2, bytesTransferred: 50 },
      finishedAt: at,
    });
    expect(restoreOutcome({ ...restore, status: 'failed', reason: 'site-error', error: 'no' })).toMatchObject({
      state: 'failed',
      reason: 'site-error',
      message: 'no',
    });
  });
});
