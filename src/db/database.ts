import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';

/** Tables are imported by the repositories that use them; the list of every table is src/schema.ts, for drizzle-kit. */
export type Db = BetterSQLite3Database;

export interface DatabaseHandle {
  db: Db;
  sqlite: Database.Database;
  close(): void;
}

/**
 * A dialect's migrations folder (`drizzle` for SQLite, `drizzle-pg` for PostgreSQL): at the project root,
 * both when running from src/ and from dist/src/.
 */
export function findMigrationsFolder(name: 'drizzle' | 'drizzle-pg' = 'drizzle'): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [resolve(here, '../..', name), resolve(here, '../../..', name)];
  return candidates.find((candidate) => existsSync(resolve(candidate, 'meta/_journal.json'))) ?? candidates[0]!;
}

/**
 * Opens (or creates) the database and applies pending migrations before anything uses it.
 * `:memory:` gives tests a private, migrated database. `migrate: false` is for a command that
 * runs beside the daemon that owns the data directory: it only checks that the daemon applied
 * every migration this version knows (see MigrationsPendingError).
 */
export function openDatabase(
  path: string,
  { migrate: applyMigrations = true }: { migrate?: boolean } = {},
): DatabaseHandle {
  // The data directory holds sealed credentials and token hashes: owner only.
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const sqlite = new Database(path);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  const db = drizzle(sqlite);
  if (applyMigrations) migrate(db, { migrationsFolder: findMigrationsFolder() });
  else if (pendingMigrations(sqlite) > 0) {
    sqlite.close();
    throw new MigrationsPendingError(path);
  }
  return {
    db,
    sqlite,
    close: () => {
      if (sqlite.open) sqlite.close();
    },
  };
}

/** The database is older than this version's schema and its owner must apply the migrations first. */
export class MigrationsPendingError extends Error {
  override name = 'MigrationsPendingError';
  constructor(path: string) {
    super(`${path} lacks migrations of this version; stop the daemon using it and start this version (or run migrate)`);
  }
}

/** Migrations in drizzle/ newer than the last one the database records, as drizzle's migrator counts them. */
function pendingMigrations(sqlite: Database.Database): number {
  return migrationGap(sqlite).pending;
}

/**
 * How a database's schema stands against this version's drizzle/: the migrations it lacks (`pending`), and whether
 * it records one this version does not know (`newer`: a later version migrated it).
 */
export function migrationGap(sqlite: Database.Database): { pending: number; newer: boolean } {
  const journal = JSON.parse(readFileSync(resolve(findMigrationsFolder(), 'meta/_journal.json'), 'utf8')) as {
    entries: { when: number }[];
  };
  const applied = sqlite
    .prepare("select name from sqlite_master where type = 'table' and name = '__drizzle_migrations'")
    .get()
    ? (sqlite.prepare('select max(created_at) as at from __drizzle_migrations').get() as { at: number | null }).at
    : null;
  return {
    pending: journal.entries.filter((entry) => applied === null || entry.when > applied).length,
    newer: applied !== null && journal.entries.every((entry) => entry.when < applied),
  };
}
