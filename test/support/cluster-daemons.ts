import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, inject } from 'vitest';
import { startDaemonProcess, type DaemonProcess } from './daemon-process.js';
import { createTestDatabase } from './postgres.js';

/**
 * Daemon processes of one cluster for a test file (issue 34): a database of its own in the run's PostgreSQL, one
 * secret key, a blob directory every process mounts (one machine), and a data directory per process or command.
 * Scheduled work that would race the test is off unless `settings` turns it on. Every process started is stopped
 * (SIGTERM) after the file, and every directory removed.
 */
export function useClusterDaemons(label: string, settings: Record<string, string> = {}) {
  let database: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  const key = randomBytes(32).toString('base64');
  const blobDir = mkdtempSync(join(tmpdir(), `sitewarden-${label}-blobs-`));
  const dirs: string[] = [blobDir];
  const processes: DaemonProcess[] = [];

  beforeAll(async () => {
    database = await createTestDatabase(inject('postgresUrl'), label);
  });
  afterAll(async () => {
    for (const daemon of processes) {
      daemon.child.kill('SIGTERM');
      await daemon.exited;
    }
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    await database?.drop();
  });

  const databaseUrl = () => {
    if (!database) throw new Error('the cluster’s database is made in beforeAll');
    return database.url;
  };
  /** The settings a process of the cluster starts with, its data directory `dataDir`. */
  const env = (dataDir: string): Record<string, string> => ({
    SITEWARDEN_DATA_DIR: dataDir,
    SITEWARDEN_DATABASE_URL: databaseUrl(),
    SITEWARDEN_SECRET_KEY: key,
    SITEWARDEN_BLOB_TYPE: 'directory',
    SITEWARDEN_BLOB_PATH: blobDir,
    SITEWARDEN_LOG_LEVEL: 'info',
    SITEWARDEN_BACKUP_INTERVAL_HOURS: '0',
    ...settings,
  });

  return {
    databaseUrl,
    env,
    blobDir,
    /** A data directory of its own for a process, or for the operator commands. */
    dataDir(name: string): string {
      const dir = mkdtempSync(join(tmpdir(), `sitewarden-${label}-${name}-`));
      dirs.push(dir);
      return dir;
    },
    /** A process of the cluster on `dataDir` with `args` (`--role …`) and `extra` settings, stopped after the file. */
    async start(dataDir: string, args: string[], extra: Record<string, string> = {}): Promise<DaemonProcess> {
      const daemon = await startDaemonProcess({ ...env(dataDir), ...extra }, args);
      processes.push(daemon);
      return daemon;
    },
  };
}
