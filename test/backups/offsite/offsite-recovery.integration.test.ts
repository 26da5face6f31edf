import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKUPS_CONFIG } from '../../../src/backups/backups.config.js';
import { openRemoteRepository, type RemoteRepository } from '../../../src/backups/offsite/remote-store.js';
import { createS3Backend } from '../../../src/blobs/s3-backend.js';
import { databaseSnapshot, filesSnapshot, useBackupSite, verifyJob } from '../../support/backup-site.js';
import { checkRepository } from '../../support/repository-check.js';
import { useS3Target } from '../../support/s3-server.js';
import { buildOnce, runCliAsync, startDaemonProcess } from '../../support/daemon-process.js';
import { createTestApp } from '../../support/test-app.js';
import { connectSite } from '../../support/wordpress-state.js';

/**
 * A real WordPress site backed up to s3rver (real AWS SDK, loopback): prune while a backup runs
 * deletes nothing that backup references; then a new daemon with an empty data directory, given
 * only the target's configuration and passphrase, lists the backups in the bucket and restores one.
 */
const passphrase = 'recovery test passphrase';
const target = useS3Target({ passphrase, s3: { maxAttempts: 2 } });
// Fewer files, the same checks: every file and row comes back, from the bucket alone.
const bed = useBackupSite({ backups: { ...DEFAULT_BACKUPS_CONFIG, offsite: target.offsite } }, { lean: true });
const api = (path = '') => `/api/sites/${bed.siteId}${path}`;
const sha256 = (content: string) => createHash('sha256').update(content).digest('hex');

async function openBucket(): Promise<RemoteRepository> {
  return openRemoteRepository({
    target: 'offsite',
    backend: createS3Backend(target.server.target()),
    passphrase,
    create: false,
  });
}

async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 120_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > until) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON answers
const state: { first?: any; second?: any; db?: Record<string, unknown>; files?: Record<string, string> } = {};
const ONLY_IN_FIRST = 'only in the first backup\n'.repeat(100);
const ADDED_FOR_SECOND = 'added for the second backup\n'.repeat(100);

describe('prune while a backup runs, then disaster recovery from the bucket', () => {
  it('takes a first backup to the local store and the bucket', async () => {
    writeFileSync(join(bed.site.root, 'wp-content/only-in-first.txt'), ONLY_IN_FIRST);
    const queued = await bed.t.call('POST', api('/backups'));
    await bed.t.services.backups.idle();
    state.first = (await bed.t.call('GET', api(`/backups/${queued.json.id}`))).json;
    expect(state.first, JSON.stringify(state.first)).toMatchObject({
      status: 'completed',
      targets: ['local', 'offsite'],
    });
    // A site's first copy is a PUT to s3rver per object: ~1,100 for the lean site.
  }, 240_000);

  it('prunes while the second backup uploads: nothing the backup references is deleted', async () => {
    unlinkSync(join(bed.site.root, 'wp-content/only-in-first.txt'));
    writeFileSync(join(bed.site.root, 'wp-content/added-for-second.txt'), ADDED_FOR_SECOND);
    await bed.site.php(`
      wp_insert_post( array( 'post_title' => 'Recovery canary', 'post_content' => 'in the second backup', 'post_status' => 'publish' ) );
    `);
    // Retention keeps only the newest: the first backup goes once the second completes.
    expect((await bed.t.call('PATCH', api(), { json: { backups: { keepLast: 1 } } })).status).toBe(200);
    state.db = await databaseSnapshot(bed.site);
    state.files = filesSnapshot(bed.site);

    const queued = await bed.t.call('POST', api('/backups'));
    expect(queued.status, queued.text).toBe(202);
    const running = await waitFor(
      async () => (await bed.t.call('GET', api(`/backups/${queued.json.id}`))).json,
      (backup) => backup.status !== 'queued',
    );
    expect(running.status).toBe('running');
    // The prune is a job: it waits for the running backup's hold on the store, then runs.
    const concurrentPrune = await bed.t.call('POST', '/api/targets/offsite/prune');
    expect(concurrentPrune.status, concurrentPrune.text).toBe(202);
    await bed.t.services.backups.idle();
    const pruned = (await bed.t.call('GET', `/api/jobs/${concurrentPrune.json.id}`)).json;
    expect(pruned, JSON.stringify(pruned)).toMatchObject({ state: 'succeeded' });
    state.second = (await bed.t.call('GET', api(`/backups/${queued.json.id}`))).json;
    expect(state.second, JSON.stringify(state.second)).toMatchObject({
      status: 'completed',
      targets: ['local', 'offsite'],
    });

    // Every snapshot in the bucket names only objects that are there and read back whole.
    const bucket = await openBucket();
    const check = await checkRepository(bucket);
    expect(check.problems).toEqual([]);
    expect(check.backups).toEqual([state.second.id]);
    // The new file went up with the second backup; the old one, referenced by the first only, goes at
    // that prune if retention forgot the first backup before it listed the snapshots, else at the next.
    expect(await bucket.store.has(sha256(ADDED_FOR_SECOND))).toBe(true);
    const againQueued = await bed.t.call('POST', '/api/targets/offsite/prune');
    expect(againQueued.status, againQueued.text).toBe(202);
    await bed.t.services.backups.idle();
    const again = (await bed.t.call('GET', `/api/jobs/${againQueued.json.id}`)).json;
    expect(again.state).toBe('succeeded');
    expect(pruned.progress.objectsDeleted + again.progress.objectsDeleted).toBeGreaterThan(0);
    expect(await bucket.store.has(sha256(ONLY_IN_FIRST))).toBe(false);
    expect(await bucket.store.has(sha256(ADDED_FOR_SECOND))).toBe(true);
    expect((await checkRepository(bucket)).problems).toEqual([]);
    const verified = await verifyJob(bed.t, api(`/backups/${state.second.id}/verify?target=offsite`));
    expect(verified.json, verified.text).toMatchObject({ ok: true, missing: [], corrupt: [] });
  }, 240_000);

  it('recovers on a new daemon from the bucket and the passphrase alone, into the changed site', async () => {
    // The old machine is gone: its data directory with it.
    rmSync(join(bed.dataDir, 'backups'), { recursive: true, force: true });
    await bed.site.php(`
      $post = get_page_by_title( 'Recovery canary', OBJECT, 'post' );
      wp_update_post( array( 'ID' => $post->ID, 'post_title' => 'Changed after the disaster' ) );
      update_option( 'blogname', 'Not the backed-up name' );
    `);
    writeFileSync(join(bed.site.root, 'wp-content/written-after.txt'), 'not in any backup');
    expect(await databaseSnapshot(bed.site)).not.toEqual(state.db);

    const dataDir = mkdtempSync(join(tmpdir(), 'sitewarden-recovered-'));
    const fresh = createTestApp({
      config: {
        dataDir,
        backups: {
          ...DEFAULT_BACKUPS_CONFIG,
          offsite: {
            targets: [{ name: 'offsite', type: 's3', passphrase, s3: target.server.target() }],
            defaultTargets: ['local', 'offsite'],
          },
        },
      },
    });
    try {
      const wrong = createTestApp({
        config: {
          dataDir,
          backups: {
            ...DEFAULT_BACKUPS_CONFIG,
            offsite: {
              targets: [{ name: 'offsite', type: 's3', passphrase: 'not the passphrase', s3: target.server.target() }],
              defaultTargets: ['local'],
            },
          },
        },
      });
      const refused = await wrong.call('GET', '/api/targets/offsite/snapshots');
      await wrong.close();
      expect(refused.status).toBe(422);
      expect(refused.json.type).toMatch(/backup-target-wrong-passphrase$/);

      const listed = await fresh.call('GET', '/api/targets/offsite/snapshots');
      expect(listed.status, listed.text).toBe(200);
      expect(listed.json.unreadable).toEqual([]);
      expect(listed.json.items).toEqual([
        expect.objectContaining({
          backupId: state.second.id,
          siteUrl: bed.site.url,
          manifestHash: state.second.manifest,
        }),
      ]);

      const siteId = await connectSite(fresh, bed.site);
      const started = await fresh.call('POST', `/api/targets/offsite/snapshots/${state.second.id}/restore`, {
        json: { siteId },
      });
      expect(started.status, started.text).toBe(202);
      await fresh.services.backups.idle();
      const restore = (await fresh.call('GET', `/api/sites/${siteId}/restores/${started.json.id}`)).json;
      expect(restore, JSON.stringify(restore)).toMatchObject({ status: 'completed', reason: null });

      expect(await databaseSnapshot(bed.site)).toEqual(state.db);
      expect(filesSnapshot(bed.site)).toEqual(state.files);
      expect(await bed.site.php(`echo get_the_title( get_page_by_title( 'Recovery canary', OBJECT, 'post' ) );`)).toBe(
        'Recovery canary',
      );
      // The recovered backup is in the new daemon's history, held by the target.
      const history = (await fresh.call('GET', `/api/sites/${siteId}/backups`)).json.items;
      expect(history).toContainEqual(expect.objectContaining({ id: state.second.id, targets: ['offsite'] }));
    } finally {
      await fresh.services.backups.idle();
      await fresh.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 300_000);

  it('restores with `sitewarden recover restore` from the bucket alone: a fresh data directory, the passphrase file', async () => {
    buildOnce();
    // The second machine is gone too; the site changed since.
    await bed.site.php(`
      $post = get_page_by_title( 'Recovery canary', OBJECT, 'post' );
      wp_update_post( array( 'ID' => $post->ID, 'post_title' => 'Changed before the CLI restore' ) );
      update_option( 'blogname', 'Not the backed-up name either' );
    `);
    writeFileSync(join(bed.site.root, 'wp-content/written-after.txt'), 'not in any backup, again');
    expect(await databaseSnapshot(bed.site)).not.toEqual(state.db);

    const dataDir = mkdtempSync(join(tmpdir(), 'sitewarden-recovered-cli-'));
    const passphraseFile = join(dataDir, 'offsite.passphrase');
    writeFileSync(passphraseFile, `${passphrase}\n`, { mode: 0o600 });
    const s3 = target.server.target();
    const env = {
      SITEWARDEN_DATA_DIR: dataDir,
      SITEWARDEN_BACKUP_INTERVAL_HOURS: '0',
      SITEWARDEN_TARGETS: 'offsite',
      SITEWARDEN_TARGET_OFFSITE_ENDPOINT: s3.endpoint,
      SITEWARDEN_TARGET_OFFSITE_BUCKET: s3.bucket,
      SITEWARDEN_TARGET_OFFSITE_PREFIX: s3.prefix,
      SITEWARDEN_TARGET_OFFSITE_PATH_STYLE: 'on',
      SITEWARDEN_TARGET_OFFSITE_ACCESS_KEY_ID: s3.credentials!.accessKeyId,
      SITEWARDEN_TARGET_OFFSITE_SECRET_ACCESS_KEY: s3.credentials!.secretAccessKey,
      SITEWARDEN_TARGET_OFFSITE_PASSPHRASE_FILE: passphraseFile,
    };
    try {
      // The site is connected once to the new daemon (its new address would do), which is then stopped.
      const daemon = await startDaemonProcess(env);
      let siteId: string;
      try {
        const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
        const { username, applicationPassword } = bed.site.admin;
        const connected = await fetch(`http://127.0.0.1:${daemon.port}/api/sites`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ url: bed.site.url, username, applicationPassword }),
        });
        expect(connected.status).toBe(201);
        siteId = ((await connected.json()) as { id: string }).id;
      } finally {
        daemon.child.kill('SIGTERM');
        await daemon.exited;
      }

      const listed = await runCliAsync(['recover', 'list', '--target', 'offsite'], env);
      expect(listed.status, listed.stderr).toBe(0);
      expect(listed.stdout).toContain(state.second.id);
      const restored = await runCliAsync(
        ['recover', 'restore', '--target', 'offsite', '--site', siteId, state.second.id],
        env,
      );
      expect(restored.status, restored.stdout + restored.stderr).toBe(0);
      expect(restored.stdout).toMatch(new RegExp(`^completed: restore \\S+ of backup ${state.second.id} from offsite`));

      // What WordPress holds now is the backup's: every row, every file, the canary's title.
      expect(await databaseSnapshot(bed.site)).toEqual(state.db);
      expect(filesSnapshot(bed.site)).toEqual(state.files);
      expect(await bed.site.php(`echo get_option( 'blogname' );`)).not.toBe('Not the backed-up name either');
      expect(await bed.site.php(`echo get_the_title( get_page_by_title( 'Recovery canary', OBJECT, 'post' ) );`)).toBe(
        'Recovery canary',
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 400_000);
});
