import type { Db } from '../../src/db/database.js';
import { sites, siteTags } from '../../src/sites/sites.table.js';

/**
 * A connected site `https://site-N.example.test` and its tags, written straight into a SQLite database,
 * synchronously: a bench seeds thousands inside one better-sqlite3 transaction (the sites repository is
 * async, issue 34).
 */
export function seedConnectedSite(db: Db, { id, n, at, tags }: { id: string; n: number; at: Date; tags: string[] }) {
  db.insert(sites)
    .values({
      id,
      url: `https://site-${n}.example.test`,
      restUrl: `https://site-${n}.example.test/wp-json/`,
      state: 'connected',
      createdAt: at,
      updatedAt: at,
    })
    .run();
  if (tags.length > 0)
    db.insert(siteTags)
      .values(tags.map((tag) => ({ siteId: id, tag })))
      .run();
}
