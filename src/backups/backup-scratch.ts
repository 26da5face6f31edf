import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { parseStored } from '../shared/stored-json.js';
import type { SiteFileEntry } from '../wordpress/connector-client.js';
import { ChunkList, type ManifestFileEntry } from './manifest.js';

/** A listed file with the hash the site declared for it; `seq` is its place in path order. */
export interface DeclaredFile {
  seq: number;
  path: string;
  size: number;
  mtime: number;
  sha256: string;
}

/** A listed file's `seq` and declared size, the chunks proven to hold its declared content (JSON) or null, and whether they are held (1). */
export type ReuseCandidate = [seq: number, size: number, chunks: string | null, held: number | null];

/**
 * One site's backup working set on disk rather than in memory: the site's listing as it arrives,
 * the previous backup's entries, and the content this site has proven it holds, so a site's size
 * does not become the daemon's. TEXT compares as bytes, the order both the connector and
 * manifests use for paths. One file per site (`path`): what a failed or killed backup received
 * and checked stays proven for the next try (which then need not download it again); a completed
 * backup deletes the file, its manifest being the proof from then on.
 */
export function openBackupScratch(path: string) {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  let db: Database.Database;
  try {
    db = openFile(path);
  } catch {
    // Damaged (a crash can do that): it only held proofs, which the next downloads renew.
    removeBackupScratch(path);
    db = openFile(path);
  }
  const insertPrevious = db.prepare('INSERT OR REPLACE INTO previous (path, size, mtime, sha256) VALUES (?, ?, ?, ?)');
  const insertProven = db.prepare('INSERT OR REPLACE INTO proven (sha256, chunks) VALUES (?, ?)');
  const storedNow = db.prepare('INSERT OR REPLACE INTO proven (sha256, chunks, held) VALUES (?, ?, 1)');
  const insertListed = db.prepare('INSERT INTO listed (path, size, mtime, sha256) VALUES (?, ?, ?, ?)');
  const knownAfter = db
    .prepare<[string, number, number], [string, number, number, string]>(
      'SELECT path, size, mtime, sha256 FROM previous WHERE path > ? AND mtime < ? ORDER BY path LIMIT ?',
    )
    .raw();
  // Raw rows: a later backup takes every listed file through these, and arrays of four cost less than named objects.
  const candidatesAfter = db
    .prepare<[number, number], ReuseCandidate>(
      `SELECT listed.seq, listed.size, proven.chunks, proven.held FROM listed LEFT JOIN proven USING (sha256)
       WHERE listed.seq > ? AND listed.sha256 IS NOT NULL ORDER BY listed.seq LIMIT ?`,
    )
    .raw();
  const reuseChunks = db.prepare(
    'UPDATE listed SET chunks = (SELECT chunks FROM proven WHERE proven.sha256 = listed.sha256) WHERE seq = ?',
  );
  const reuseHeld = db.prepare('UPDATE proven SET held = 1 WHERE sha256 = (SELECT sha256 FROM listed WHERE seq = ?)');
  const unrecordedBetween = db.prepare<[number, number], DeclaredFile>(
    `SELECT seq, path, size, mtime, sha256 FROM listed
     WHERE seq > ? AND seq <= ? AND sha256 IS NOT NULL AND chunks IS NULL ORDER BY seq`,
  );
  const record = db.prepare('UPDATE listed SET size = ?, mtime = ?, sha256 = ?, chunks = ? WHERE seq = ?');
  const totals = db.prepare<[], { files: number; bytes: number | null }>(
    'SELECT COUNT(*) AS files, SUM(size) AS bytes FROM listed WHERE sha256 IS NOT NULL',
  );
  const recorded = db.prepare<[], { path: string; size: number; mtime: number; sha256: string; chunks: string }>(
    'SELECT path, size, mtime, sha256, chunks FROM listed WHERE chunks IS NOT NULL ORDER BY seq',
  );

  let pending: [number, Omit<ManifestFileEntry, 'path'>][] = [];

  return {
    /** The previous backup of this site: its entries spare hashing, its content is proven to be this site's. */
    addPrevious: db.transaction((files: ManifestFileEntry[]) => {
      for (const file of files) {
        insertPrevious.run(file.path, file.size, file.mtime, file.sha256);
        insertProven.run(file.sha256, JSON.stringify(file.chunks));
      }
    }),
    /** Entries of the previous backup after `cursor` older than `before`, for the connector's `known`. */
    knownAfter: (cursor: string, before: number, limit: number) => knownAfter.all(cursor, before, limit),
    addListed: db.transaction((files: SiteFileEntry[]) => {
      for (const file of files) insertListed.run(file.path, file.size, file.mtime, file.sha256);
    }),
    totals: () => {
      const { files, bytes } = totals.get()!;
      return { files, bytes: bytes ?? 0 };
    },
    /**
     * Listed files after `seq`, each with the objects holding its declared content that this site
     * proved it has (earlier backup, or sent and hashed now), or null; `held` is 1 once this backup
     * stored them or saw them in the store (no need to look again).
     */
    candidatesAfter: (seq: number, limit: number) => candidatesAfter.all(seq, limit),
    /** These listed files keep the proven objects of their declared content, which are now known to be held. */
    reuse: db.transaction((seqs: readonly number[]) => {
      for (const seq of seqs) {
        reuseChunks.run(seq);
        reuseHeld.run(seq);
      }
    }),
    /** Listed files after `seq` up to `through` neither reused nor recorded yet: what must be downloaded. */
    unrecordedBetween: (seq: number, through: number) => unrecordedBetween.all(seq, through),
    /** A file's content as received and checked (its declaration may have been renewed since listing), or reused; written at `flush`. */
    record: (seq: number, file: Omit<ManifestFileEntry, 'path'>) => {
      pending.push([seq, file]);
    },
    /** One transaction for a window's records: a statement each would cost a write each. */
    flush: db.transaction(() => {
      for (const [seq, file] of pending) {
        record.run(file.size, file.mtime, file.sha256, JSON.stringify(file.chunks), seq);
        storedNow.run(file.sha256, JSON.stringify(file.chunks));
      }
      pending = [];
    }),
    *recordedFiles(): Generator<ManifestFileEntry> {
      for (const row of recorded.iterate())
        yield {
          path: row.path,
          size: row.size,
          mtime: row.mtime,
          sha256: row.sha256,
          chunks: parseStored(ChunkList, row.chunks, `the scratch record of ${row.path}`),
        };
    },
    /** `done`: the backup completed, its manifest proves its content, the file goes. */
    close(done: boolean) {
      db.close();
      if (done) removeBackupScratch(path);
    },
  };
}

function openFile(path: string): Database.Database {
  // It holds the site's paths and hashes: owner only, like the store.
  if (!existsSync(path)) writeFileSync(path, '', { mode: 0o600 });
  const db = new Database(path);
  // WAL survives the process being killed mid-write; nothing here needs to survive a power cut.
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  // The driver's default page cache is 16 MB per connection, held for the whole backup: lookups here are by key, and the
  // operating system's file cache serves a re-read page as well, so 4 MB keeps the daemon's size from following the site's.
  db.pragma('cache_size = -4000');
  db.exec(`
    DROP TABLE IF EXISTS previous;
    DROP TABLE IF EXISTS listed;
    CREATE TABLE previous (path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime INTEGER NOT NULL, sha256 TEXT NOT NULL) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS proven (sha256 TEXT PRIMARY KEY, chunks TEXT NOT NULL, held INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
    UPDATE proven SET held = 0;
    CREATE TABLE listed (seq INTEGER PRIMARY KEY, path TEXT NOT NULL, size INTEGER NOT NULL, mtime INTEGER NOT NULL, sha256 TEXT, chunks TEXT);
  `);
  return db;
}

/** Removes a scratch store with its -wal and -shm (a completed backup's, a damaged one, a removed site's). */
export function removeBackupScratch(path: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
}

export type BackupScratch = ReturnType<typeof openBackupScratch>;
