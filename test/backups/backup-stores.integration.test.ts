import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_BACKUPS_CONFIG } from '../../src/backups/backups.config.js';
import { listTargetSnapshotsCommand, localBackupObjects, verifyBackupCommand } from '../../src/backups/backups.cli.js';
import { referencedObjects } from '../../src/backups/manifest.js';
import { openDatabase } from '../../src/db/database.js';
import { sqliteStateOf } from '../../src/db/state-db.js';
import type { StoreLocation } from '../../src/blobs/store-location.js';
import { databaseSnapshot, filesSnapshot, verifyJob } from '../support/backup-site.js';
import { trimBrowserAssets } from '../support/lean-site.js';
import { startS3Server, type S3TestServer } from '../support/s3-server.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { createTestSite, type TestSite } from '../support/wordpress/index.js';
import { connectSite, installConnector } from '../support/wordpress-state.js';

/**
 * The `local` target's two stores (src/backups/backup-store.ts) through the same behaviour: the data directory's
 * store on one machine, and in cluster mode (issue 34) a sealed repository under `backups/` in the cluster's bucket
 * (s3rver). A backup of a real site is completed, verifies, restores exactly, and retention's garbage collection
 * deletes what only a deleted backup referenced. In the bucket, a second process with a data directory of its own
 * (the same state and key, as a cluster's) reads what the first took, and neither keeps an object locally.
 */
describe.each(['data directory', 'bucket'] as const)('backups in the %s', (store) => {
  let site: TestSite;
  let s3: S3TestServer | undefined;
  let root: string;
  let worker: TestApp;
  let other: TestApp;
  let siteId: string;
  let blobStore: StoreLocation | undefined;
  const key = randomBytes(32);
  const api = (path = '') => `/api/sites/${siteId}${path}`;

  beforeAll(async () => {
    site = await createTestSite();
    trimBrowserAssets(site);
    await installConnector(site);
    root = mkdtempSync(join(tmpdir(), 'sitewarden-backup-stores-'));
    if (store === 'bucket') {
      s3 = await startS3Server();
      blobStore = { type: 's3', s3: s3.target({ prefix: 'cluster/' }) };
    }
    const processOf = (name: string) =>
      createTestApp({
        databasePath: join(root, 'state.sqlite'),
        secretKey: key,
        config: { dataDir: join(root, name), blobStore, backups: { ...DEFAULT_BACKUPS_CONFIG, keepLast: 1 } },
      });
    worker = processOf('worker');
    other = processOf('other');
    siteId = await connectSite(worker, site);
  });
  afterAll(async () => {
    await worker?.services.backups.idle();
    await worker?.close();
    await other?.close();
    await site?.stop();
    await s3?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  async function backUp() {
    const queued = await worker.call('POST', api('/backups'));
    expect(queued.status, queued.text).toBe(202);
    await worker.services.backups.idle();
    return (await worker.call('GET', api(`/backups/${queued.json.id}`))).json;
  }

  it(
    'takes a backup, which verifies and restores exactly; retention deletes what only an older one held',
    { timeout: 300_000 },
    async () => {
      mkdirSync(join(site.root, 'wp-content/uploads'), { recursive: true });
      writeFileSync(join(site.root, 'wp-content/uploads/large.bin'), randomBytes(9 * 1024 * 1024));
      writeFileSync(join(site.root, 'wp-content/uploads/first.txt'), 'only in the first backup');
      const first = await backUp();
      expect(first, JSON.stringify(first)).toMatchObject({ status: 'completed', reason: null, targets: ['local'] });
      const verified = await verifyJob(worker, api(`/backups/${first.id}/verify`));
      expect(verified.json, verified.text).toMatchObject({ ok: true, problems: [] });
      const onlyFirst = await referencedObjects(worker.services.backups.store, first.manifest);

      rmSync(join(site.root, 'wp-content/uploads/first.txt'));
      const snapshotFiles = filesSnapshot(site);
      const snapshotDb = await databaseSnapshot(site);
      const second = await backUp();
      expect(second).toMatchObject({ status: 'completed' });
      // keepLast 1: the first is deleted, and the objects only it referenced with it.
      expect((await worker.call('GET', api(`/backups/${first.id}`))).status).toBe(404);
      const kept = await referencedObjects(worker.services.backups.store, second.manifest);
      const gone = [...onlyFirst].filter((hash) => !kept.has(hash));
      expect(gone.length).toBeGreaterThan(0);
      for (const hash of gone) expect(await worker.services.backups.store.has(hash), hash).toBe(false);
      for (const hash of kept) expect(await worker.services.backups.store.has(hash), hash).toBe(true);

      writeFileSync(join(site.root, 'wp-content/uploads/later.txt'), 'not in the backup');
      await site.php(`update_option( 'blogname', 'Changed after the backup' );`);
      const started = await worker.call('POST', api(`/backups/${second.id}/restore`));
      expect(started.status, started.text).toBe(202);
      await worker.services.backups.idle();
      const restore = (await worker.call('GET', api(`/restores/${started.json.id}`))).json;
      expect(restore, JSON.stringify(restore)).toMatchObject({ status: 'completed', reason: null });
      expect(filesSnapshot(site)).toEqual(snapshotFiles);
      expect(await databaseSnapshot(site)).toEqual(snapshotDb);
    },
  );

  it.runIf(store === 'bucket')(
    'keeps the objects in the bucket, sealed, and another process reads them: verify and download',
    async () => {
      const [latest] = (await other.call('GET', api('/backups'))).json.items;
      const verified = await verifyJob(other, api(`/backups/${latest.id}/verify`));
      expect(verified.json, verified.text).toMatchObject({ ok: true, problems: [] });
      const download = await other.app.request(api(`/backups/${latest.id}/download`), {
        headers: { authorization: `Bearer ${other.writeToken}` },
      });
      expect(download.status).toBe(200);
      expect((await download.arrayBuffer()).byteLength).toBeGreaterThan(9 * 1024 * 1024);

      // Neither data directory holds an object; the bucket holds the repository's key file, data and snapshots.
      for (const name of ['worker', 'other']) expect(existsSync(join(root, name, 'backups', 'objects'))).toBe(false);
      const bucket = join(s3!.directory, s3!.bucket, 'cluster', 'backups');
      expect(readdirSync(bucket).sort()).toEqual(expect.arrayContaining(['data', 'keys', 'snapshots']));
      // A snapshot record per backup held (the kept one, the restore's pre-restore one); the deleted one's went with it.
      const held = (await other.call('GET', api('/backups'))).json.items.filter(
        (item: { status: string }) => item.status === 'completed',
      );
      const records = readdirSync(join(bucket, 'snapshots')).filter((name) => name.endsWith('._S3rver_object'));
      expect(records.length).toBe(held.length);
    },
  );

  it.runIf(store === 'bucket')(
    'is verified by `sitewarden backup verify`, and listed from the bucket and the secret key alone as an offsite target',
    async () => {
      const [latest] = (await other.call('GET', api('/backups'))).json.items;
      const lines: string[] = [];
      const out = (line: string) => lines.push(line);
      const verified = await verifyBackupCommand({
        open: async () => sqliteStateOf(openDatabase(join(root, 'state.sqlite'))),
        local: () =>
          localBackupObjects({ dataDir: join(root, 'command'), blobStore: blobStore!, secretKey: () => key }),
        backupId: latest.id,
        out,
      });
      expect(verified, lines.join('\n')).toBe(0);
      expect(lines[0]).toMatch(new RegExp(`^ok: backup ${latest.id} on local, \\d+ objects`));

      // The recipe of docs/cluster.md: the blob store's prefix and backups/, the key in base64 as the passphrase.
      lines.length = 0;
      const offsite = {
        targets: [
          {
            name: 'cluster',
            type: 's3' as const,
            passphrase: key.toString('base64'),
            s3: s3!.target({ prefix: 'cluster/backups/' }),
          },
        ],
        defaultTargets: ['local'],
      };
      expect(await listTargetSnapshotsCommand({ target: 'cluster', offsite, out })).toBe(0);
      expect(lines.slice(1).map((line) => line.split('\t')[0])).toContain(latest.id);
    },
  );
});
