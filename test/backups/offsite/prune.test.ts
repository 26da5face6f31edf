import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDirectoryTargetApp, syntheticBackups } from '../../support/synthetic-backups.js';
import { createFakeClock, insertConnectedSite, type TestApp } from '../../support/test-app.js';
import { verifyJob } from '../../support/backup-site.js';
import { directoryBlobPath } from '../../support/directory-target.js';

const passphrase = 'prune test passphrase';
const DAY = 86_400_000;

/** Retention by site, tag and default, and what it leaves on an offsite target once pruned. */
describe('retention and prune of an offsite target', () => {
  let t: TestApp;
  let targetDir: string;
  let close: () => Promise<void>;
  beforeEach(() => {
    ({ t, targetDir, close } = createDirectoryTargetApp(passphrase));
  });
  afterEach(() => close());

  /** Asks for a prune (202, a queued job), waits for the job, and answers it as it ended. */
  const prune = async (target = 'nas') => {
    const queued = await t.call('POST', `/api/targets/${target}/prune`);
    expect(queued.status, queued.text).toBe(202);
    expect(queued.json).toMatchObject({ kind: 'target-prune', siteId: null, state: 'queued', params: { target } });
    await t.services.backups.idle();
    return (await t.call('GET', `/api/jobs/${queued.json.id}`)).json;
  };

  const blobPath = async (backups: ReturnType<typeof syntheticBackups>, hash: string, dir = targetDir) =>
    directoryBlobPath(dir, await backups.openTarget(), hash);

  it('keeps what the tag’s retention keeps, forgets the rest on the target, and prune deletes only their own objects', async () => {
    const siteId = insertConnectedSite(t, { tags: ['client:acme'] });
    const put = await t.call('PUT', '/api/backup-retention/client:acme', { json: { keepLast: 2 } });
    expect(put.status, put.text).toBe(200);
    expect((await t.call('GET', `/api/sites/${siteId}/settings`)).json.backups).toMatchObject({ keepLast: 2 });

    const backups = syntheticBackups(t, { targetDir, passphrase });
    const now = Date.now();
    const made = [];
    for (const daysAgo of [4, 3, 2, 1])
      made.push(await backups.create(siteId, { createdAt: new Date(now - daysAgo * DAY) }));
    const [oldest, older, kept1, kept2] = made as [
      (typeof made)[0],
      (typeof made)[0],
      (typeof made)[0],
      (typeof made)[0],
    ];

    const retention = await t.services.backups.applyRetention(siteId);
    expect(retention.deletedBackups.sort()).toEqual([oldest.id, older.id].sort());
    const listed = (await t.call('GET', '/api/targets/nas/snapshots')).json;
    expect(listed.items.map((snapshot: { backupId: string }) => snapshot.backupId)).toEqual([kept1.id, kept2.id]);
    // Forgotten at once; their objects stay until the target is pruned.
    expect(existsSync(await blobPath(backups, oldest.objects[1]!))).toBe(true);

    const pruned = await prune();
    expect(pruned.state).toBe('succeeded');
    // Each backup has 3 objects of its own, a file part and a manifest; the shared object stays.
    expect(pruned.progress).toMatchObject({
      target: 'nas',
      snapshotsKept: 2,
      snapshotsForgotten: 0,
      objectsDeleted: 10,
    });
    expect(t.logs.events('target.pruned')).toEqual([
      expect.objectContaining({ jobId: pruned.id, target: 'nas', objectsDeleted: 10, snapshotsKept: 2 }),
    ]);
    for (const hash of [...oldest.objects.slice(1), ...older.objects.slice(1)])
      expect(existsSync(await blobPath(backups, hash))).toBe(false);
    for (const backup of [kept1, kept2]) {
      for (const hash of backup.objects) expect(existsSync(await blobPath(backups, hash))).toBe(true);
      const verified = await verifyJob(t, `/api/sites/${siteId}/backups/${backup.id}/verify?target=nas`);
      expect(verified.json, verified.text).toMatchObject({ ok: true });
    }
  });

  it('takes a site’s own value over its tags’, the largest of its tags’, and GFS counts from the default', async () => {
    const siteId = insertConnectedSite(t, { tags: ['a', 'b'] });
    await t.call('PUT', '/api/backup-retention/a', { json: { keepLast: 3, keepWeekly: 2 } });
    await t.call('PUT', '/api/backup-retention/b', { json: { keepLast: 5 } });
    expect((await t.call('GET', `/api/sites/${siteId}/settings`)).json.backups).toMatchObject({
      keepLast: 5,
      keepWeekly: 2,
      keepDaily: 0,
    });
    await t.call('PATCH', `/api/sites/${siteId}`, { json: { backups: { keepLast: 1, keepDaily: 7 } } });
    expect((await t.call('GET', `/api/sites/${siteId}/settings`)).json.backups).toMatchObject({
      keepLast: 1,
      keepDaily: 7,
      keepWeekly: 2,
    });
    const overview = (await t.call('GET', '/api/backup-retention')).json;
    expect(overview.defaults).toMatchObject({ keepLast: 14, keepDaily: 0 });
    expect(overview.tags.map((tag: { tag: string }) => tag.tag)).toEqual(['a', 'b']);
    expect((await t.call('DELETE', '/api/backup-retention/b')).status).toBe(204);
    expect((await t.call('GET', `/api/sites/${siteId}/settings`)).json.backups).toMatchObject({ keepLast: 1 });
    const bad = await t.call('PUT', '/api/backup-retention/a', { json: { keepDaily: -1, keepHourly: 3 } });
    expect(bad.status).toBe(400);
    expect(bad.json.type).toMatch(/validation-failed$/);
  });

  it('deletes objects no snapshot names (a killed upload) and snapshots of backups gone from the history; keeps another daemon’s', async () => {
    const siteId = insertConnectedSite(t);
    const backups = syntheticBackups(t, { targetDir, passphrase });
    const mine = await backups.create(siteId);
    const repository = await backups.openTarget();
    // Uploaded by a backup killed before its snapshot: no snapshot names it.
    const orphan = (await repository.store.put(Buffer.from('half a backup'))).hash;
    // Deleted from the history, its snapshot left on the target (the daemon stopped in between).
    const gone = await backups.create(siteId);
    await backups.repository.deleteBackup(gone.id);
    // Another daemon's backup in the same repository, of a site this daemon does not have.
    const foreign = await backups.create('site_of_another_daemon', { record: false });

    const pruned = (await prune()).progress;
    expect(pruned).toMatchObject({ snapshotsForgotten: 1, snapshotsKept: 2, objectsDeleted: 1 + 5 });
    expect(existsSync(await blobPath(backups, orphan))).toBe(false);
    for (const hash of gone.objects.slice(1)) expect(existsSync(await blobPath(backups, hash))).toBe(false);
    for (const hash of foreign.objects) expect(existsSync(await blobPath(backups, hash))).toBe(true);
    expect((await verifyJob(t, `/api/sites/${siteId}/backups/${mine.id}/verify?target=nas`)).json).toMatchObject({
      ok: true,
    });
  });

  it('deletes nothing when a snapshot cannot be read, and names an unknown target', async () => {
    const siteId = insertConnectedSite(t);
    const backups = syntheticBackups(t, { targetDir, passphrase });
    await backups.create(siteId);
    const orphan = (await (await backups.openTarget()).store.put(Buffer.from('orphan'))).hash;
    writeFileSync(join(targetDir, 'snapshots', 'f'.repeat(64)), 'not sealed');
    const refused = await prune();
    expect(refused).toMatchObject({ state: 'failed', reason: 'backup-target-failed' });
    expect(refused.message).toMatch(/prune deleted nothing, 1 snapshot record\(s\) cannot be read/);
    expect(t.logs.events('target.prune-failed')).toEqual([
      expect.objectContaining({ jobId: refused.id, target: 'nas', reason: 'backup-target-failed' }),
    ]);
    expect(existsSync(await blobPath(backups, orphan))).toBe(true);
    const unknown = await t.call('POST', '/api/targets/glacier/prune');
    expect(unknown.status).toBe(404);
    expect(unknown.json.type).toMatch(/backup-target-unknown$/);
  });

  it('keeps a removed site’s snapshots until its retention would have expired, then prunes them', async () => {
    const clock = createFakeClock(new Date());
    const app = createDirectoryTargetApp(passphrase, { clock });
    try {
      const siteId = insertConnectedSite(app.t);
      const backups = syntheticBackups(app.t, { targetDir: app.targetDir, passphrase });
      const made = [await backups.create(siteId), await backups.create(siteId)];
      const removed = await app.t.call('DELETE', `/api/sites/${siteId}`);
      expect(removed.status, removed.text).toBe(204);
      const pruneNow = async () => {
        const queued = await app.t.call('POST', '/api/targets/nas/prune');
        await app.t.services.backups.idle();
        return (await app.t.call('GET', `/api/jobs/${queued.json.id}`)).json;
      };
      // The default retention keeps the last 14 backups: a removed site's for 14 days.
      clock.advance(13 * DAY);
      expect((await pruneNow()).progress).toMatchObject({ snapshotsForgotten: 0, snapshotsKept: 2, objectsDeleted: 0 });
      for (const hash of made[1]!.objects) expect(existsSync(await blobPath(backups, hash, app.targetDir))).toBe(true);
      clock.advance(2 * DAY);
      expect((await pruneNow()).progress).toMatchObject({ snapshotsForgotten: 2, snapshotsKept: 0 });
      for (const backup of made)
        for (const hash of backup.objects) expect(existsSync(await blobPath(backups, hash, app.targetDir))).toBe(false);
    } finally {
      await app.close();
    }
  });
});
