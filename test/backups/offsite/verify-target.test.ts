import { rmSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { verifyJob } from '../../support/backup-site.js';
import { directoryBlobPath, flipBlobBit } from '../../support/directory-target.js';
import { createDirectoryTargetApp, syntheticBackups } from '../../support/synthetic-backups.js';
import { insertConnectedSite, type TestApp } from '../../support/test-app.js';

const passphrase = 'verify test passphrase';

/** `POST …/verify?target=…&sample=…`: a job checking a backup where it is stored, naming what is missing or altered there. */
describe('verify a backup on one target', () => {
  let t: TestApp;
  let targetDir: string;
  let close: () => Promise<void>;
  beforeEach(() => {
    ({ t, targetDir, close } = createDirectoryTargetApp(passphrase));
  });
  afterEach(() => close());

  it('verifies on the local store and on the offsite target; names a removed and a flipped object on the target only', async () => {
    const siteId = insertConnectedSite(t);
    const backups = syntheticBackups(t, { targetDir, passphrase });
    const backup = await backups.create(siteId, { files: 4 });
    const verify = (query = '') => verifyJob(t, `/api/sites/${siteId}/backups/${backup.id}/verify${query}`);

    expect((await verify()).json).toMatchObject({ target: 'local', ok: true, objectsChecked: 7, problems: [] });
    expect((await verify('?target=nas')).json).toMatchObject({ target: 'nas', ok: true, objectsChecked: 7 });

    const repository = await backups.openTarget();
    const blobOf = (hash: string) => directoryBlobPath(targetDir, repository, hash);
    const [, removed, flipped] = backup.objects as [string, string, string];
    rmSync(blobOf(removed));
    flipBlobBit(blobOf(flipped));

    const onTarget = (await verify('?target=nas')).json;
    expect(onTarget).toMatchObject({ ok: false, missing: [removed], corrupt: [flipped] });
    // In the site's terms: the two files those objects held (the backup's files are wp-content/f0000…).
    expect(onTarget.lost).toEqual({
      everything: false,
      files: 2,
      filePaths: ['wp-content/f0001', 'wp-content/f0002'],
      tables: 0,
      tableNames: [],
    });
    expect(onTarget.problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          new RegExp(`object ${removed} \\(data/\\w\\w/${repository.nameOf(removed)} on target nas\\) is missing`),
        ),
        expect.stringMatching(new RegExp(`object ${flipped} .*fails authentication`)),
      ]),
    );
    // The local copy is untouched.
    expect((await verify('?target=local')).json).toMatchObject({ ok: true });
  });

  it('reads back only a sample when asked, always the manifest', async () => {
    const siteId = insertConnectedSite(t);
    const backup = await syntheticBackups(t, { targetDir, passphrase }).create(siteId, { files: 60 });
    const sampled = (await verifyJob(t, `/api/sites/${siteId}/backups/${backup.id}/verify?target=nas&sample=10`)).json;
    expect(sampled).toMatchObject({ ok: true, sample: 10, target: 'nas' });
    // The manifest its file part, and between none and all of the 61 files; with 10 % almost surely far fewer than all.
    expect(sampled.objectsChecked).toBeGreaterThanOrEqual(2);
    expect(sampled.objectsChecked).toBeLessThan(63);
    const whole = (await verifyJob(t, `/api/sites/${siteId}/backups/${backup.id}/verify?target=nas&sample=100`)).json;
    expect(whole).toMatchObject({ ok: true, objectsChecked: 63 });
  });

  it('answers problem+json for an unknown target and a sample out of range', async () => {
    const siteId = insertConnectedSite(t);
    const backup = await syntheticBackups(t, { targetDir, passphrase }).create(siteId, { copy: false });
    const unknown = await t.call('POST', `/api/sites/${siteId}/backups/${backup.id}/verify?target=glacier`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(unknown.json.type).toMatch(/backup-target-unknown$/);
    expect(unknown.json.detail).toMatch(/glacier.*configured: local, nas/);
    for (const query of ['?sample=0', '?sample=101', '?sample=ten', '?target=Not%20A%20Name']) {
      const bad = await t.call('POST', `/api/sites/${siteId}/backups/${backup.id}/verify${query}`);
      expect(bad.status, query).toBe(400);
      expect(bad.json.type, query).toMatch(/validation-failed$/);
    }
  });
});
