import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_BACKUPS_CONFIG } from '../../../src/backups/backups.config.js';
import type { OffsiteConfig } from '../../../src/backups/offsite/targets.config.js';
import { databaseSnapshot, filesSnapshot, useBackupSite } from '../../support/backup-site.js';

/**
 * A real site backed up to the local store and two directory targets; the local copy gone and
 * target `a` damaged, a restore *from target b* reads b (it used to read the first target the
 * backup's row names, a, and fail on its damage), and says which target it read.
 */
const root = mkdtempSync(join(tmpdir(), 'sitewarden-two-targets-'));
const passphrase = 'two targets test passphrase';
const offsite: OffsiteConfig = {
  targets: [
    { name: 'a', type: 'directory', path: join(root, 'a'), passphrase },
    { name: 'b', type: 'directory', path: join(root, 'b'), passphrase },
  ],
  defaultTargets: ['local', 'a', 'b'],
};
afterAll(() => rmSync(root, { recursive: true, force: true }));
const bed = useBackupSite({ backups: { ...DEFAULT_BACKUPS_CONFIG, offsite } }, { lean: true });
const api = (path = '') => `/api/sites/${bed.siteId}${path}`;

/** Every file of a target's data (the encrypted objects), for damaging one target. */
function dataFiles(target: string): string[] {
  return readdirSync(join(root, target), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.parentPath.includes(`${join(root, target)}/data`))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('restoring from a named offsite target', () => {
  it('reads the target it was asked to, not the first one the backup names', async () => {
    const before = { db: await databaseSnapshot(bed.site), files: filesSnapshot(bed.site) };
    const queued = await bed.t.call('POST', api('/backups'));
    expect(queued.status, queued.text).toBe(202);
    await bed.t.services.backups.idle();
    const backup = (await bed.t.call('GET', api(`/backups/${queued.json.id}`))).json;
    expect(backup, JSON.stringify(backup)).toMatchObject({ status: 'completed', targets: ['local', 'a', 'b'] });

    // The local copy is gone and target a is damaged: every data object of it overwritten.
    rmSync(join(bed.dataDir, 'backups', 'objects'), { recursive: true, force: true });
    const damaged = dataFiles('a');
    expect(damaged.length).toBeGreaterThan(10);
    for (const file of damaged) writeFileSync(file, 'not what was stored');
    await bed.site.php(`update_option( 'blogname', 'Changed after the backup' );`);

    const started = await bed.t.call('POST', `/api/targets/b/snapshots/${backup.id}/restore`, {
      json: { siteId: bed.siteId },
    });
    expect(started.status, started.text).toBe(202);
    expect(started.json.sourceTarget).toBe('b');
    await bed.t.services.backups.idle();
    const restore = (await bed.t.call('GET', api(`/restores/${started.json.id}`))).json;
    expect(restore, JSON.stringify(restore)).toMatchObject({ status: 'completed', sourceTarget: 'b' });
    // What WordPress holds now is the backup, read from b.
    expect(await databaseSnapshot(bed.site)).toEqual(before.db);
    expect(filesSnapshot(bed.site)).toEqual(before.files);

    // From a, the damaged one, it fails: a restore never silently reads another target.
    const fromA = await bed.t.call('POST', `/api/targets/a/snapshots/${backup.id}/restore`, {
      json: { siteId: bed.siteId },
    });
    expect(fromA.status, fromA.text).toBe(202);
    await bed.t.services.backups.idle();
    const failed = (await bed.t.call('GET', api(`/restores/${fromA.json.id}`))).json;
    expect(failed, JSON.stringify(failed)).toMatchObject({ status: 'failed', sourceTarget: 'a' });
    // In the site's terms first: what could not be read is the backup's list of files and tables.
    expect(failed.error).toMatch(
      /^the backup’s list of files and tables \(its manifest\) cannot be restored from this backup: object \w+ \(data\/.* on target a\)/,
    );
  }, 300_000);
});
