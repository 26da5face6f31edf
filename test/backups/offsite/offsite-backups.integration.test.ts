import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKUPS_CONFIG } from '../../../src/backups/backups.config.js';
import { databaseSnapshot, filesSnapshot, useBackupSite, verifyJob } from '../../support/backup-site.js';
import { useS3Target } from '../../support/s3-server.js';

/**
 * Backups of a real WordPress site to the local store and an S3 target (s3rver on loopback, the
 * real AWS SDK), restored from the bucket once the local store is gone.
 */
const target = useS3Target({
  passphrase: 'offsite test passphrase',
  // Retried as a daemon retries (its default is five attempts): a connection reset under load is not a failed read.
  s3: { maxAttempts: 3 },
});
// Fewer files, the same checks: every file and row back, nothing readable in the bucket.
const bed = useBackupSite({ backups: { ...DEFAULT_BACKUPS_CONFIG, offsite: target.offsite } }, { lean: true });
const api = (path = '') => `/api/sites/${bed.siteId}${path}`;

async function backUp() {
  const queued = await bed.t.call('POST', api('/backups'));
  expect(queued.status, queued.text).toBe(202);
  await bed.t.services.backups.idle();
  return (await bed.t.call('GET', api(`/backups/${queued.json.id}`))).json;
}

function bucketFiles(): string[] {
  return readdirSync(target.server.directory, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('._S3rver_object'))
    .map((entry) => join(entry.parentPath, entry.name));
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON answers
const state: { first?: any; db?: Record<string, unknown>; files?: Record<string, string> } = {};

describe('offsite backups to S3', () => {
  it('back up to the local store and the bucket, where nothing is readable', async () => {
    await bed.site.php(`
      wp_insert_post( array( 'post_title' => 'Offsite canary post', 'post_content' => 'offsite-canary-content', 'post_status' => 'publish' ) );
    `);
    state.db = await databaseSnapshot(bed.site);
    state.files = filesSnapshot(bed.site);
    const backup = await backUp();
    expect(backup, JSON.stringify(backup)).toMatchObject({ status: 'completed', targets: ['local', 'offsite'] });
    state.first = backup;
    const files = bucketFiles();
    expect(files.some((file) => file.includes('/sitewarden/keys/repository'))).toBe(true);
    expect(files.filter((file) => file.includes('/sitewarden/snapshots/'))).toHaveLength(1);
    expect(files.filter((file) => file.includes('/sitewarden/data/')).length).toBeGreaterThan(100);
    // WordPress's own files and the new post are in there, but not readably, not even their hashes.
    for (const file of files) {
      const bytes = readFileSync(file);
      expect(bytes.includes('offsite-canary-content')).toBe(false);
      expect(bytes.includes('wp_version')).toBe(false);
    }
    expect(files.some((file) => file.includes(backup.manifest))).toBe(false);
    // A site's first copy is a PUT to s3rver per object: ~1,100 for the lean site (files, then tables and manifest).
  }, 180_000);

  it('mark a backup partial, naming the target, when the bucket cannot be reached; the next one completes', async () => {
    await target.server.pause();
    let partial;
    try {
      partial = await backUp();
    } finally {
      await target.server.resume();
    }
    expect(partial, JSON.stringify(partial)).toMatchObject({
      status: 'partial',
      reason: 'backup-target-failed',
      targets: ['local'],
    });
    expect(partial.error).toMatch(/^target offsite: /);
    expect(bed.t.logs.events('backup.partial')).toContainEqual(
      expect.objectContaining({ backupId: partial.id, targets: ['local'], failedTargets: ['offsite'] }),
    );
    // A partial backup is whole locally: it verifies, and can be downloaded.
    expect((await verifyJob(bed.t, api(`/backups/${partial.id}/verify`))).json).toMatchObject({ ok: true });

    const next = await backUp();
    expect(next, JSON.stringify(next)).toMatchObject({ status: 'completed', targets: ['local', 'offsite'] });
  });

  it('restore from the bucket after the local store is gone', async () => {
    rmSync(join(bed.dataDir, 'backups', 'objects'), { recursive: true, force: true });
    await bed.site.php(`
      $post = get_page_by_title( 'Offsite canary post', OBJECT, 'post' );
      wp_update_post( array( 'ID' => $post->ID, 'post_title' => 'Changed after the backup' ) );
      update_option( 'blogname', 'Not the backed-up name' );
    `);
    writeFileSync(join(bed.site.root, 'wp-content/added-after-the-backup.txt'), 'not in the backup');
    expect(await databaseSnapshot(bed.site)).not.toEqual(state.db);

    const started = await bed.t.call('POST', api(`/backups/${state.first.id}/restore`));
    expect(started.status, started.text).toBe(202);
    await bed.t.services.backups.idle();
    const restore = (await bed.t.call('GET', api(`/restores/${started.json.id}`))).json;
    expect(restore, JSON.stringify(restore)).toMatchObject({ status: 'completed', reason: null });
    expect(await databaseSnapshot(bed.site)).toEqual(state.db);
    expect(filesSnapshot(bed.site)).toEqual(state.files);
    expect(await bed.site.php(`echo get_option( 'blogname' );`)).not.toBe('Not the backed-up name');
    // What it sends is read back from s3rver, after a pre-restore backup that found the local store empty (every file again).
  }, 180_000);

  it('download from the bucket when the local store does not hold the backup', async () => {
    rmSync(join(bed.dataDir, 'backups', 'objects'), { recursive: true, force: true });
    const response = await bed.t.app.request(api(`/backups/${state.first.id}/download`), {
      headers: { authorization: `Bearer ${bed.t.writeToken}` },
    });
    // The problem's detail says which target failed and why, when it is not 200.
    const archive = Buffer.from(await response.arrayBuffer());
    expect(response.status, archive.subarray(0, 2_000).toString('utf8')).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/gzip');
    expect(archive.length).toBeGreaterThan(1_000_000);
    expect(archive.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    // As the restore: every object from the bucket, one by one.
  }, 180_000);
});
