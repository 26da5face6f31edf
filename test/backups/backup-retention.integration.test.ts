import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backups as backupsTable } from '../../src/backups/backups.table.js';
import { DEFAULT_BACKUPS_CONFIG } from '../../src/backups/backups.config.js';
import { referencedObjects } from '../../src/backups/manifest.js';
import { useBackupSite, verifyJob } from '../support/backup-site.js';

const bed = useBackupSite({ backups: { ...DEFAULT_BACKUPS_CONFIG, keepLast: 2 } }, { lean: true });

async function backUp(): Promise<{ id: string; status: string; manifest: string }> {
  const queued = await bed.t.call('POST', `/api/sites/${bed.siteId}/backups`);
  expect(queued.status, queued.text).toBe(202);
  await bed.t.services.backups.idle();
  return (await bed.t.call('GET', `/api/sites/${bed.siteId}/backups/${queued.json.id}`)).json;
}

async function objectsOf(manifestHash: string): Promise<Set<string>> {
  const objects = await referencedObjects(bed.t.services.backups.store, manifestHash);
  return objects.add(manifestHash);
}

describe('retention', () => {
  it('deletes the oldest backups beyond SITEWARDEN_BACKUP_KEEP_LAST and only the objects nothing else references', async () => {
    const upload = (name: string) => join(bed.site.root, 'wp-content/uploads', name);
    mkdirSync(join(bed.site.root, 'wp-content/uploads'), { recursive: true });
    writeFileSync(upload('only-in-a.bin'), randomBytes(50_000));
    const a = await backUp();
    rmSync(upload('only-in-a.bin'));
    writeFileSync(upload('in-b-and-c.bin'), randomBytes(50_000));
    const b = await backUp();
    const [objectsA, objectsB] = [await objectsOf(a.manifest), await objectsOf(b.manifest)];
    writeFileSync(upload('only-in-c.bin'), randomBytes(50_000));
    const c = await backUp();
    expect([a.status, b.status, c.status]).toEqual(['completed', 'completed', 'completed']);
    const objectsC = await objectsOf(c.manifest);

    const list = await bed.t.call('GET', `/api/sites/${bed.siteId}/backups`);
    expect(list.json.items.map((item: { id: string }) => item.id)).toEqual([c.id, b.id]);
    expect((await bed.t.call('GET', `/api/sites/${bed.siteId}/backups/${a.id}`)).json.type).toBe(
      '/problems/backup-not-found',
    );

    const onlyA = [...objectsA].filter((hash) => !objectsB.has(hash) && !objectsC.has(hash));
    expect(onlyA.length).toBeGreaterThanOrEqual(2); // Its manifest and only-in-a.bin at least.
    for (const hash of onlyA) expect(await bed.t.services.backups.store.has(hash), hash).toBe(false);
    for (const hash of [...objectsB, ...objectsC])
      expect(await bed.t.services.backups.store.has(hash), hash).toBe(true);
    for (const backup of [b, c])
      expect((await verifyJob(bed.t, `/api/sites/${bed.siteId}/backups/${backup.id}/verify`)).json.ok).toBe(true);
  });

  it('backs up a site on schedule once its last backup is older than SITEWARDEN_BACKUP_INTERVAL_HOURS', async () => {
    expect(await bed.t.services.backups.enqueueDue()).toEqual([]);
    bed.t.database.db
      .update(backupsTable)
      .set({ createdAt: new Date(Date.now() - 25 * 3_600_000) })
      .run();
    expect(await bed.t.services.backups.enqueueDue()).toEqual([bed.siteId]);
    expect(await bed.t.services.backups.enqueueDue()).toEqual([]); // Queued already: not twice.
    await bed.t.services.backups.idle();
    const latest = (await bed.t.call('GET', `/api/sites/${bed.siteId}/backups?limit=1`)).json.items[0];
    expect(latest).toMatchObject({ kind: 'scheduled', status: 'completed' });
  });
});
