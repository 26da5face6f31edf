import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { referencedObjects } from '../../src/backups/manifest.js';
import { createFileObjectStore } from '../../src/backups/object-store.js';
import * as tables from '../../src/schema.js';
import { createId } from '../../src/shared/ids.js';
import { daemonApi, runCliAsync, startDaemonProcess, useDaemonSite } from '../support/daemon-process.js';
import { createTestDatabase } from '../support/postgres.js';
import { createTestApp } from '../support/test-app.js';
import { connectSite } from '../support/wordpress-state.js';

/** A daemon that starts no work of its own: the restore below is the only job it runs. */
const QUIET = {
  SITEWARDEN_SCHEDULED_UPTIME_PROBES: 'off',
  SITEWARDEN_SCHEDULED_BACKUPS: 'off',
  SITEWARDEN_SCHEDULED_AUDITS: 'off',
};
const REPORT = '<html><body>the audit’s report, from the single machine</body></html>';

/**
 * The blob step of `sitewarden cluster import` (issue 34, docs/cluster.md "Moving a single machine into a cluster"):
 * a data directory with a real backup of a real WordPress site, an audit report and a screenshot, imported into a
 * fresh PostgreSQL database and a directory blob store. A daemon started on the cluster restores that backup onto the
 * site, changed meanwhile, and serves the report and the screenshot. And a backup whose local copy is damaged fails
 * the import, with nothing kept in the database, and an import after the repair goes through on what the failed one left.
 */
describe('sitewarden cluster import of the blobs', () => {
  const bed = useDaemonSite('import-blobs', { lean: true });
  const key = randomBytes(32);
  let cluster: string;
  let database: { url: string; drop(): Promise<void> };
  let token: string;
  let siteId: string;
  let backupId: string;
  let manifestHash: string;
  const png = randomBytes(2_000);
  const auditId = createId('perf');
  const safeUpdateId = createId('sup');

  const importInto = () =>
    runCliAsync(['cluster', 'import', '--from', bed.dataDir], {
      SITEWARDEN_DATABASE_URL: database.url,
      SITEWARDEN_SECRET_KEY: key.toString('base64'),
      SITEWARDEN_DATA_DIR: join(cluster, 'command'),
      SITEWARDEN_BLOB_TYPE: 'directory',
      SITEWARDEN_BLOB_PATH: join(cluster, 'blobs'),
    });
  async function sites(): Promise<unknown[]> {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      return (await client.query('select id from sites')).rows;
    } finally {
      await client.end();
    }
  }

  beforeAll(async () => {
    cluster = mkdtempSync(join(tmpdir(), 'sitewarden-import-blobs-cluster-'));
    database = await createTestDatabase(inject('postgresUrl'), 'import-blobs');
    const { site, dataDir } = bed;
    const app = createTestApp({ databasePath: join(dataDir, 'sitewarden.db'), secretKey: key, config: { dataDir } });
    try {
      siteId = await connectSite(app, site);
      token = app.writeToken;
      mkdirSync(join(site.root, 'wp-content/uploads'), { recursive: true });
      writeFileSync(join(site.root, 'wp-content/uploads/moved.txt'), 'in the backup');
      await site.php(`update_option( 'blogname', 'Backed up on the single machine' );`);
      const queued = await app.call('POST', `/api/sites/${siteId}/backups`);
      expect(queued.status, queued.text).toBe(202);
      await app.services.backups.idle();
      const backup = (await app.call('GET', `/api/sites/${siteId}/backups/${queued.json.id}`)).json;
      expect(backup, JSON.stringify(backup)).toMatchObject({ status: 'completed' });
      ({ id: backupId, manifest: manifestHash } = backup);

      // An audit's report and a safe update's screenshot, where the single machine keeps them.
      const now = app.clock.now();
      const report = gzipSync(REPORT);
      app.database.db
        .insert(tables.performanceAudits)
        .values({
          id: auditId,
          siteId,
          url: site.url,
          formFactor: 'mobile',
          trigger: 'manual',
          runs: 1,
          status: 'completed',
          queuedAt: now,
          finishedAt: now,
          reportBytes: report.length,
        })
        .run();
      mkdirSync(join(dataDir, 'performance', 'reports', siteId), { recursive: true });
      writeFileSync(join(dataDir, 'performance', 'reports', siteId, `${auditId}.html.gz`), report);
      app.database.db
        .insert(tables.safeUpdates)
        .values({
          id: safeUpdateId,
          siteId,
          itemType: 'plugin',
          slug: 'akismet',
          status: 'kept',
          phase: 'done',
          policy: '{}',
          createdAt: now,
        })
        .run();
      mkdirSync(join(dataDir, 'safe-updates', safeUpdateId), { recursive: true });
      writeFileSync(join(dataDir, 'safe-updates', safeUpdateId, 'before-0.png'), png);
    } finally {
      await app.close();
    }
  }, 120_000);
  afterAll(async () => {
    await database?.drop();
    if (cluster) rmSync(cluster, { recursive: true, force: true });
  });

  it('fails on a backup whose local copy is damaged, and keeps no row', async () => {
    const local = createFileObjectStore({ dir: join(bed.dataDir, 'backups') });
    const [object] = [...(await referencedObjects(local, manifestHash))];
    const path = join(bed.dataDir, 'backups', 'objects', object!.slice(0, 2), object!);
    const intact = readFileSync(path);
    writeFileSync(path, randomBytes(intact.length));
    try {
      const result = await importInto();
      expect(result.status, result.stdout).toBe(1);
      expect(result.stderr).toContain(`backup ${backupId} of ${bed.site.url} could not be copied`);
      expect(result.stderr).toContain('nothing was imported (the database rolled back');
      expect(await sites()).toEqual([]);
    } finally {
      writeFileSync(path, intact);
    }
  }, 60_000);

  it('moves backups, reports and screenshots: a daemon on the cluster restores the backup onto the site', async () => {
    const result = await importInto();
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^moved: backups, 1 \(\d+ bytes sent\), each read back from the blob store$/m);
    expect(result.stdout).toContain(
      `moved: audit reports, 1 (${gzipSync(REPORT).length} bytes sent), each read back from the blob store`,
    );
    expect(result.stdout).toContain(`moved: screenshots, 1 (${png.length} bytes sent), each read back`);
    expect(result.stdout).toMatch(/^moved: the database, \d+ tables, \d+ rows, each verified$/m);
    expect(result.stdout).not.toContain('not moved');

    // The site changes after the backup: its files and its database.
    const { site } = bed;
    writeFileSync(join(site.root, 'wp-content/uploads/moved.txt'), 'changed after the backup');
    writeFileSync(join(site.root, 'wp-content/uploads/later.txt'), 'not in the backup');
    await site.php(`update_option( 'blogname', 'Changed in the cluster' );`);

    const daemon = await startDaemonProcess({
      SITEWARDEN_DATA_DIR: join(cluster, 'daemon'),
      SITEWARDEN_DATABASE_URL: database.url,
      SITEWARDEN_SECRET_KEY: key.toString('base64'),
      SITEWARDEN_BLOB_TYPE: 'directory',
      SITEWARDEN_BLOB_PATH: join(cluster, 'blobs'),
      ...QUIET,
    });
    try {
      const read = (path: string) =>
        fetch(`http://127.0.0.1:${daemon.port}/api/sites/${siteId}${path}`, {
          headers: { authorization: `Bearer ${token}`, 'accept-encoding': 'identity' },
        });
      const report = await read(`/performance/${auditId}/report`);
      expect(report.status).toBe(200);
      expect(await report.text()).toBe(REPORT);
      const screenshot = await read(`/safe-updates/${safeUpdateId}/screenshots/before-0.png`);
      expect(screenshot.status).toBe(200);
      expect(Buffer.from(await screenshot.arrayBuffer())).toEqual(png);

      const call = daemonApi(() => daemon.port, token);
      const started = await call('POST', `/api/sites/${siteId}/backups/${backupId}/restore`);
      expect(started.status, JSON.stringify(started.json)).toBe(202);
      let restore;
      for (let poll = 0; poll < 300; poll++) {
        restore = (await call('GET', `/api/sites/${siteId}/restores/${started.json.id}`)).json;
        if (restore.status === 'completed' || restore.status === 'failed') break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(restore, daemon.logs().slice(-3_000)).toMatchObject({ status: 'completed', reason: null });
      expect(readFileSync(join(site.root, 'wp-content/uploads/moved.txt'), 'utf8')).toBe('in the backup');
      expect(() => readFileSync(join(site.root, 'wp-content/uploads/later.txt'))).toThrow(/ENOENT/);
      expect(await site.php(`echo get_option( 'blogname' );`)).toBe('Backed up on the single machine');
    } finally {
      daemon.child.kill('SIGTERM');
      await daemon.exited;
    }
  }, 120_000);
});
