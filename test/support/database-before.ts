import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { onTestFinished } from 'vitest';

/**
 * A database migrated by drizzle/'s migrations up to, not including, the one whose tag starts with
 * `before` (`'0032'`): what a daemon of that time left, for a migration test to fill, close and
 * upgrade with `openDatabase(path)`, or (in memory) to compare write by write with a database at
 * HEAD. Called inside a test; its directory goes when the test ends.
 */
export function databaseBefore(
  before: string,
  where: 'file' | 'memory' = 'file',
): { sqlite: Database.Database; path: string } {
  const dir = mkdtempSync(join(tmpdir(), `sitewarden-before-${before}-`));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const migrations = join(dir, 'drizzle');
  cpSync(resolve(import.meta.dirname, '../../drizzle'), migrations, { recursive: true });
  const journalPath = join(migrations, 'meta/_journal.json');
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: { tag: string }[] };
  journal.entries = journal.entries.filter((entry) => entry.tag < before);
  writeFileSync(journalPath, JSON.stringify(journal));
  const path = where === 'memory' ? ':memory:' : join(dir, 'sitewarden.db');
  const sqlite = new Database(path);
  if (where === 'memory') sqlite.pragma('synchronous = OFF');
  migrate(drizzle(sqlite), { migrationsFolder: migrations });
  return { sqlite, path };
}

/** A small deterministic generator (mulberry32), so a failure can be replayed from its seed. */
export function seededRandom(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
