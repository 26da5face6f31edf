import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BackupRow } from '../../../src/backups/backups.table.js';
import type { Manifest } from '../../../src/backups/manifest.js';
import { createFileObjectStore } from '../../../src/backups/object-store.js';
import { LOST_LISTED, verifyBackup, type VerifyProgress } from '../../../src/backups/verify.js';
import { verifyJob } from '../../support/backup-site.js';
import { directoryBlobPath, flipBlobBit } from '../../support/directory-target.js';
import { createDirectoryTargetApp, syntheticBackups } from '../../support/synthetic-backups.js';
import { insertConnectedSite, type TestApp } from '../../support/test-app.js';

const passphrase = 'verify jobs test passphrase';

/** Verify and repair as jobs: progress, what is lost in the site's terms, and damaged objects sent again. */
describe('verify and repair jobs', () => {
  let t: TestApp;
  let targetDir: string;
  let close: () => Promise<void>;
  beforeEach(() => {
    ({ t, targetDir, close } = createDirectoryTargetApp(passphrase));
  });
  afterEach(() => close());

  const setUp = async (options: { files?: number; copy?: boolean } = {}) => {
    const siteId = insertConnectedSite(t);
    const backups = syntheticBackups(t, { targetDir, passphrase });
    const backup = await backups.create(siteId, options);
    // (Opening the target creates its repository: a backup never copied leaves it without one.)
    const repository = options.copy === false ? null : await backups.openTarget();
    const blobOf = (hash: string) => directoryBlobPath(targetDir, repository!, hash);
    const flip = (hash: string) => flipBlobBit(blobOf(hash));
    const path = (action: string, query = '') => `/api/sites/${siteId}/backups/${backup.id}/${action}${query}`;
    return { siteId, backups, backup, repository, blobOf, flip, path };
  };

  it('answers 202 with a queued job; the job says who asked and ends with the verification', async () => {
    const { backup, path } = await setUp({ files: 4 });
    const queued = await t.call('POST', path('verify', '?target=nas'));
    expect(queued.status).toBe(202);
    expect(queued.json).toMatchObject({
      id: expect.stringMatching(/^vfy_/),
      kind: 'backup-verify',
      state: 'queued',
      params: { backupId: backup.id, target: 'nas', sample: 100, requestedBy: { kind: 'token' } },
    });
    await t.services.backups.idle();
    const job = (await t.call('GET', `/api/jobs/${queued.json.id}`)).json;
    expect(job).toMatchObject({
      state: 'succeeded',
      progress: { objectsChecked: 7, result: { ok: true, target: 'nas', objectsChecked: 7, missing: [], corrupt: [] } },
    });
    expect(t.logs.events('backup.verified')).toEqual([
      expect.objectContaining({
        jobId: job.id,
        backupId: backup.id,
        target: 'nas',
        objectsChecked: 7,
        requestedByKind: 'token',
        requestedById: expect.any(String),
      }),
    ]);
    // Listed with the other jobs of its kind.
    expect(
      (await t.call('GET', '/api/jobs?kind=backup-verify')).json.items.map((item: { id: string }) => item.id),
    ).toEqual([job.id]);
  });

  it('names the lost files in the event, and marks a corrupt object so the next copy sends it again', async () => {
    const { siteId, backups, backup, blobOf, flip, path } = await setUp({ files: 2 });
    const shared = backup.objects[0]!;
    flip(shared);
    const damaged = await verifyJob(t, path('verify', '?target=nas'));
    expect(damaged.json).toMatchObject({
      ok: false,
      corrupt: [shared],
      lost: { files: 1, filePaths: ['wp-content/f0000'] },
    });
    expect(t.logs.events('backup.damaged')).toEqual([
      expect.objectContaining({
        backupId: backup.id,
        target: 'nas',
        corruptObjects: 1,
        missingObjects: 0,
        everythingLost: false,
        lostFiles: 1,
        lostFilePaths: ['wp-content/f0000'],
        lostTables: [],
        requestedByKind: 'token',
      }),
    ]);
    const bad = readFileSync(blobOf(shared));
    // The next backup holds the same object: its copy sends it again rather than trusting the name it finds.
    await backups.create(siteId, { files: 1 });
    expect(readFileSync(blobOf(shared)).equals(bad)).toBe(false);
    expect((await verifyJob(t, path('verify', '?target=nas'))).json).toMatchObject({ ok: true });
    // The mark went with the repair: a third copy uploads nothing of it again.
    const mended = readFileSync(blobOf(shared));
    await backups.create(siteId, { files: 1 });
    expect(readFileSync(blobOf(shared)).equals(mended)).toBe(true);
  });

  it('repairs a target from the local store, and the local store from the target, recording who asked', async () => {
    const { backup, blobOf, flip, path } = await setUp({ files: 3 });
    const [, removed, flipped] = backup.objects as [string, string, string];
    rmSync(blobOf(removed));
    flip(flipped);
    const repaired = await verifyJob(t, path('repair', '?target=nas'));
    expect(repaired.status).toBe(202);
    expect(repaired.job).toMatchObject({
      kind: 'backup-repair',
      state: 'succeeded',
      params: { target: 'nas', requestedBy: { kind: 'token' } },
      progress: { objectsResent: 2, resentFrom: { local: 2 }, unrepairable: [], result: { ok: true } },
    });
    expect(t.logs.events('backup.repaired')).toEqual([
      expect.objectContaining({
        backupId: backup.id,
        target: 'nas',
        objectsResent: 2,
        stillDamaged: 0,
        requestedByKind: 'token',
      }),
    ]);
    expect((await verifyJob(t, path('verify', '?target=nas'))).json).toMatchObject({ ok: true });

    // The other way: an object the local store lost comes back from the target, checked against its hash.
    await t.services.backups.store.delete(removed);
    expect((await verifyJob(t, path('verify'))).json).toMatchObject({ ok: false, missing: [removed] });
    expect((await verifyJob(t, path('repair'))).job.progress).toMatchObject({
      objectsResent: 1,
      resentFrom: { nas: 1 },
      result: { ok: true },
    });
    expect((await t.services.backups.store.read(removed)).length).toBe(2000);
  });

  it('says what no store can give back, and never spreads a bad copy', async () => {
    const { backup, blobOf, flip, path } = await setUp({ files: 2 });
    const lost = backup.objects[1]!;
    // Gone here, corrupt there: the target's bad copy is not sent into the local store.
    await t.services.backups.store.delete(lost);
    flip(lost);
    const repaired = await verifyJob(t, path('repair'));
    expect(repaired.job.progress).toMatchObject({
      objectsResent: 0,
      unrepairable: [lost],
      result: { ok: false, missing: [lost], lost: { files: 1, filePaths: ['wp-content/f0001'] } },
    });
    expect(await t.services.backups.store.has(lost)).toBe(false);
    expect(t.logs.events('backup.repaired')).toEqual([expect.objectContaining({ objectsResent: 0, stillDamaged: 1 })]);
    expect(t.logs.events('backup.damaged')).toEqual([
      expect.objectContaining({ jobId: repaired.job.id, target: 'local', lostFilePaths: ['wp-content/f0001'] }),
    ]);
    expect(readFileSync(blobOf(lost)).length).toBeGreaterThan(0);
  });

  it('fails the job when the target cannot be read, and answers problems before queuing anything', async () => {
    const { backup, path } = await setUp({ copy: false });
    const failed = await verifyJob(t, path('verify', '?target=nas'));
    expect(failed.job).toMatchObject({ state: 'failed', reason: 'backup-target-empty' });
    expect(t.logs.events('backup.verify-failed')).toEqual([
      expect.objectContaining({
        jobId: failed.job.id,
        kind: 'backup-verify',
        backupId: backup.id,
        target: 'nas',
        reason: 'backup-target-empty',
      }),
    ]);
    const unknown = await t.call('POST', path('repair', '?target=glacier'));
    expect(unknown.status).toBe(404);
    expect(unknown.json.type).toMatch(/backup-target-unknown$/);
    const read = await t.call('POST', path('verify'), { token: t.readToken });
    expect(read.status).toBe(403);
    const none = await t.call('POST', path('verify').replace(backup.id, 'bkp_nope'));
    expect(none.status).toBe(404);
  });
});

describe('what a damaged backup loses, in files and tables', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sitewarden-verify-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('names the tables a missing batch takes away, bounds the lists, and tells its progress', async () => {
    const store = createFileObjectStore({ dir });
    const chunks = [];
    for (let i = 0; i < LOST_LISTED + 5; i++) chunks.push((await store.put(Buffer.from(`file ${i}`))).hash);
    const batch = (await store.put(Buffer.from('INSERT INTO `wp_posts` VALUES (1);'))).hash;
    const kept = (await store.put(Buffer.from('INSERT INTO `wp_options` VALUES (1);'))).hash;
    const table = (name: string, batches: string[]) => ({
      name,
      create: `CREATE TABLE \`${name}\` (a int)`,
      rows: 1,
      primaryKey: [],
      checksum: '1',
      batches,
    });
    const manifest: Manifest = {
      format: 1,
      siteUrl: 'http://127.0.0.1',
      createdAt: new Date().toISOString(),
      files: chunks.map((hash, i) => ({
        path: `wp-content/uploads/${String(i).padStart(3, '0')}.txt`,
        size: `file ${i}`.length,
        mtime: 0,
        sha256: hash,
        chunks: [hash],
      })),
      tables: [table('wp_posts', [batch]), table('wp_options', [kept])],
    };
    const manifestHash = (await store.put(Buffer.from(JSON.stringify(manifest)))).hash;
    const backup = { id: 'bkp_1', status: 'completed', manifestHash, files: chunks.length } as BackupRow;
    for (const hash of [...chunks, batch]) await store.delete(hash);

    const seen: VerifyProgress[] = [];
    const result = await verifyBackup({ store, backup, onProgress: (progress) => seen.push(progress) });
    expect(result.ok).toBe(false);
    // Read side by side: the first LOST_LISTED found, in path order.
    const paths = chunks.map((_, i) => `wp-content/uploads/${String(i).padStart(3, '0')}.txt`);
    expect(result.lost).toMatchObject({
      everything: false,
      files: LOST_LISTED + 5,
      tables: 1,
      tableNames: ['wp_posts'],
    });
    expect(result.lost.filePaths).toHaveLength(LOST_LISTED);
    expect(result.lost.filePaths).toEqual([...result.lost.filePaths].sort());
    for (const path of result.lost.filePaths) expect(paths).toContain(path);
    expect(seen.at(-1)).toMatchObject({
      filesChecked: LOST_LISTED + 5,
      files: LOST_LISTED + 5,
      tablesChecked: 2,
      tables: 2,
    });
    expect(seen.map((progress) => progress.filesChecked + progress.tablesChecked)).toEqual(
      [...seen.map((progress) => progress.filesChecked + progress.tablesChecked)].sort((a, b) => a - b),
    );

    // Without the manifest nothing can be said of its files: everything is lost.
    await store.delete(manifestHash);
    expect((await verifyBackup({ store, backup })).lost).toMatchObject({ everything: true, files: 0 });
  });

  it('stops when its signal aborts', async () => {
    const store = createFileObjectStore({ dir });
    const hash = (await store.put(Buffer.from('x'))).hash;
    const manifestHash = (
      await store.put(
        Buffer.from(
          JSON.stringify({
            format: 1,
            siteUrl: 'http://127.0.0.1',
            createdAt: new Date().toISOString(),
            files: [{ path: 'a', size: 1, mtime: 0, sha256: hash, chunks: [hash] }],
            tables: [],
          }),
        ),
      )
    ).hash;
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(
      verifyBackup({
        store,
        backup: { id: 'bkp_2', status: 'completed', manifestHash } as BackupRow,
        signal: controller.signal,
      }),
    ).rejects.toThrow('stop');
  });
});
