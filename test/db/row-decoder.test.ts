import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { rowDecoder } from '../../src/db/row-decoder.js';
import { inventoryItems } from '../../src/inventory/inventory.table.js';
import { jobs } from '../../src/jobs/jobs.table.js';
import { sites } from '../../src/sites/index.js';

describe('a row decoder', () => {
  it('decodes the raw values of a select of every column as drizzle maps the row', () => {
    const { db, close } = openDatabase(':memory:');
    const at = new Date('2026-11-25T10:00:00.123Z');
    db.insert(jobs)
      .values([
        {
          id: 'full',
          kind: 'site-update',
          siteId: 'site_1',
          state: 'failed',
          reason: 'site-refused',
          message: 'no',
          progress: '{"items":[]}',
          params: '{"bulkId":"b"}',
          attempts: 2,
          createdAt: at,
          startedAt: new Date(at.getTime() + 1),
          finishedAt: new Date(at.getTime() + 2),
        },
        { id: 'bare', kind: 'bulk-update', state: 'queued', createdAt: at },
      ])
      .run();
    const byId = db
      .select()
      .from(jobs)
      .where(eq(jobs.id, sql.placeholder('id')))
      .prepare();
    const decode = rowDecoder(jobs);
    for (const id of ['full', 'bare']) {
      const decoded = decode(byId.values({ id })[0]!);
      expect(decoded).toEqual(byId.get({ id }));
      expect(decoded.createdAt).toBeInstanceOf(Date);
    }
    expect(decode(byId.values({ id: 'bare' })[0]!)).toMatchObject({ siteId: null, startedAt: null, attempts: 0 });

    // Another table's kinds of column: booleans, enums.
    db.insert(sites)
      .values({
        id: 's',
        url: 'https://a.test',
        restUrl: 'https://a.test/wp-json/',
        state: 'connected',
        createdAt: at,
        updatedAt: at,
      })
      .run();
    db.insert(inventoryItems)
      .values({ siteId: 's', type: 'plugin', slug: 'a', name: 'A', version: '1', updateVersion: null, active: true })
      .run();
    const item = db.select().from(inventoryItems).prepare();
    expect(rowDecoder(inventoryItems)(item.values()[0]!)).toEqual(item.get());
    expect(rowDecoder(inventoryItems)(item.values()[0]!).active).toBe(true);
    close();
  });
});
