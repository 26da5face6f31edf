import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { directoryBlobPath, flipBlobBit } from '../support/directory-target.js';
import { createDirectoryTargetApp, syntheticBackups } from '../support/synthetic-backups.js';
import { insertConnectedSite, type TestApp } from '../support/test-app.js';
import { signIn } from './signed-in.js';

const passphrase = 'dashboard verify passphrase';

/** The Backups page's Verify and repair section: a damaged backup in files, and Repair mending it. */
describe('verify and repair in the dashboard', () => {
  let t: TestApp;
  let targetDir: string;
  let close: () => Promise<void>;
  beforeEach(() => {
    ({ t, targetDir, close } = createDirectoryTargetApp(passphrase));
  });
  afterEach(() => close());

  it('shows what a damaged backup lost as site files, and repairs it from the local copy', async () => {
    const siteId = insertConnectedSite(t);
    const backups = syntheticBackups(t, { targetDir, passphrase });
    const backup = await backups.create(siteId, { files: 2 });
    const repository = await backups.openTarget();
    const flipped = backup.objects[1]!;
    flipBlobBit(directoryBlobPath(targetDir, repository, flipped));

    const user = await signIn(t);
    const queued = await user.follow(await user.post(`/backups/targets/nas/snapshots/${backup.id}/verify`, {}));
    expect(queued).toMatch(new RegExp(`Verify of ${backup.id} on nas queued \\(job vfy_`));
    await t.services.backups.idle();
    const page = await (await user.get('/backups')).text();
    expect(page).toMatch(/damaged:\s+1 file and 0 tables cannot be restored from here/);
    expect(page).toContain('Files: wp-content/f0001');
    expect(page).toContain(`corrupt ${flipped}`);
    const repair = `/backups/checks/${siteId}/${backup.id}/repair?target=nas`;
    expect(page).toContain(`action="${repair}"`);

    expect(await user.follow(await user.post(repair, {}))).toMatch(
      new RegExp(`Repair of ${backup.id} on nas queued \\(job rpr_`),
    );
    await t.services.backups.idle();
    expect(await (await user.get('/backups')).text()).toMatch(
      /1 object sent again; verified: \d+ objects read back and\s+matched/,
    );
    expect(t.logs.events('backup.repaired')).toEqual([
      expect.objectContaining({ backupId: backup.id, target: 'nas', objectsResent: 1, requestedByKind: 'user' }),
    ]);

    // The site's page queues a verify of the local copy the same way.
    expect(await user.follow(await user.post(`/sites/${siteId}/backups/${backup.id}/verify`, {}))).toMatch(
      /Verify queued \(job vfy_\w+\): the Backups page shows its progress/,
    );
    await t.services.backups.idle();
    expect(t.logs.events('backup.verified')).toContainEqual(
      expect.objectContaining({ backupId: backup.id, target: 'local', requestedByKind: 'user' }),
    );
  });

  it('answers a repair of a backup the site does not have with the problem, queuing nothing', async () => {
    const siteId = insertConnectedSite(t);
    const user = await signIn(t);
    const page = await user.follow(await user.post(`/backups/checks/${siteId}/bkp_nope/repair?target=nas`, {}));
    expect(page).toContain('has no backup bkp_nope');
    expect((await t.call('GET', '/api/jobs?kind=backup-repair')).json.items).toEqual([]);
  });
});
