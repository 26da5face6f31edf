import Database from 'better-sqlite3';

/**
 * A set of object hashes, each with a number, on disk rather than in memory: what garbage
 * collection and verify remember about objects grows with a site's distinct files (and, for
 * garbage collection, with every backup kept), so it lives in a private temporary SQLite database
 * (SQLite's empty file name: a file in the system's temporary directory, deleted when closed)
 * whose page cache is bounded. One open transaction for its whole life: nothing in it needs to
 * outlive the process, and a commit per insert would cost a write each.
 */
export function openHashScratch() {
  const db = new Database('');
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -2000');
  db.exec('CREATE TABLE hashes (hash TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID; BEGIN');
  const insert = db.prepare('INSERT OR REPLACE INTO hashes (hash, value) VALUES (?, ?)');
  const insertNew = db.prepare('INSERT OR IGNORE INTO hashes (hash, value) VALUES (?, 0)');
  const select = db.prepare<[string], number>('SELECT value FROM hashes WHERE hash = ?').pluck();
  return {
    add(hash: string): void {
      insertNew.run(hash);
    },
    has: (hash: string): boolean => select.get(hash) !== undefined,
    get: (hash: string): number | undefined => select.get(hash),
    set(hash: string, value: number): void {
      insert.run(hash, value);
    },
    close(): void {
      db.close();
    },
  };
}
