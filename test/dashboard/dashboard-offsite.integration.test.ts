import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKUPS_CONFIG } from '../../src/backups/backups.config.js';
import { useBackupSite } from '../support/backup-site.js';
import { useS3Target } from '../support/s3-server.js';
import { signIn } from './signed-in.js';

/** The Backups page against a real WordPress site backed up to a real S3 API (s3rver on loopback). */
const target = useS3Target({ passphrase: 'dashboard offsite passphrase' });
// Fewer files: what the page shows of a backup does not depend on how many the site has.
const bed = useBackupSite({ backups: { ...DEFAULT_BACKUPS_CONFIG, offsite: target.offsite } }, { lean: true });

describe('offsite backups in the dashboard', () => {
  it('lists the backup the target holds, verifies it there and prunes the target when confirmed', async () => {
    const user = await signIn(bed.t);
    const backup = await bed.t.services.backups.request(bed.siteId);
    await bed.t.services.backups.idle();
    expect(await bed.t.services.backups.get(bed.siteId, backup.id)).toMatchObject({ status: 'completed' });

    const page = await (await user.get('/backups')).text();
    expect(page).toMatch(/reachable<\/span\s*>\s*1 backup,/);
    expect(page).toContain(`<span class="url">${backup.id}</span>`);
    expect(page).toContain(`href="/sites/${bed.siteId}">${bed.site.url}</a>`);
    expect(page).toContain(`action="/backups/targets/offsite/snapshots/${backup.id}/restore"`);
    expect(page).toMatch(new RegExp(`name="siteId" value="${bed.siteId}"`));

    // A verify is a job: queued at once, its outcome in the Verify and repair section once it ran.
    const base = `/backups/targets/offsite/snapshots/${backup.id}/verify`;
    expect(await user.follow(await user.post(`${base}?sample=10`, {}))).toMatch(
      new RegExp(`Verify of ${backup.id} on offsite queued \\(job vfy_`),
    );
    await bed.t.services.backups.idle();
    expect(await (await user.get('/backups')).text()).toMatch(
      /verified: \d+ objects read back and\s+matched \(a 10 % sample\)/,
    );
    await user.post(base, {});
    await bed.t.services.backups.idle();
    const checks = await (await user.get('/backups')).text();
    expect(checks.match(/verified: \d+ objects read back and\s+matched/g)).toHaveLength(2);
    expect(bed.t.logs.events('backup.verified')).toEqual([
      expect.objectContaining({ target: 'offsite', sample: 10, requestedByKind: 'user' }),
      expect.objectContaining({ target: 'offsite', sample: 100, requestedByKind: 'user' }),
    ]);

    // The backup is still referenced: pruning keeps it and everything it needs.
    const pruned = await user.follow(await user.post('/backups/targets/offsite/prune', { confirm: 'yes' }));
    expect(pruned).toMatch(/Prune of offsite queued \(job prn_/);
    await bed.t.services.backups.idle();
    expect(bed.t.logs.events('target.pruned')).toEqual([
      expect.objectContaining({ target: 'offsite', objectsDeleted: 0, snapshotsForgotten: 0 }),
    ]);
    expect(await (await user.get('/backups')).text()).toContain(`<span class="url">${backup.id}</span>`);
  }, 300_000);
});
