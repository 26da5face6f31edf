import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { isNotNull } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import type { SQLiteTable } from 'drizzle-orm/sqlite-core';
import { importBackups } from './backups/backup-import.js';
import { createDirectoryBackend } from './blobs/blob-backend.js';
import { copyBlobs } from './blobs/copy-blobs.js';
import { createSharedBlobs } from './blobs/shared-blobs.js';
import type { StoreLocation } from './blobs/store-location.js';
import { IMPORTED_TABLES, SEALED_COLUMNS } from './cluster-import-tables.js';
import { migrationGap } from './db/database.js';
import { openStateDatabase, type StateDatabase, type StateDb } from './db/state-db.js';
import {
  copyTable,
  resetIdentities,
  suppressTriggers,
  tablesHoldingRows,
  tallyOnPostgres,
  type TablePair,
  type TableTally,
} from './db/table-copy.js';
import { DATABASE_FILE } from './main.js';
import { lockDataDir } from './shared/data-dir-lock.js';
import { createSecretBox } from './shared/secret-box.js';

/**
 * `sitewarden cluster import --from DATA_DIR` (issue 34, docs/cluster.md "Moving a single machine into a cluster"):
 * a single machine's data directory moved into the cluster. The database: every table of cluster-import-tables.ts
 * copied into the cluster's empty PostgreSQL database in one transaction, verified table by table (rows and digest,
 * db/table-copy.ts). Then, still inside that transaction, the blobs copied into the cluster's blob store under the
 * prefixes its processes read (shared-blobs.ts) and read back there: the backups into its repository, each verified
 * (backups/backup-import.ts), the audit reports and screenshots under their keys (blobs/copy-blobs.ts). Only then
 * does it commit, so the cluster's rows never name a blob its store lacks.
 *
 * The source is read with its daemon stopped: the import takes the data directory's lock (a daemon running on it
 * would go on writing what the cluster would never see; a snapshot would hide that), opens the database read-only
 * in one read transaction, and leaves it as it was, so a failed import leaves the single machine ready to start.
 */

/** The import cannot go ahead (the source, the key or the target); nothing was written to the cluster. */
export class ImportRefusedError extends Error {
  override name = 'ImportRefusedError';
}

/**
 * The blobs could not all be copied into the cluster's blob store: the database's transaction was rolled back,
 * and the store may keep what was copied (no row names it; a retry reuses it).
 */
export class ImportBlobsError extends Error {
  override name = 'ImportBlobsError';
  constructor(reason: string) {
    super(
      `${reason}; nothing was imported (the database rolled back; the blob store may keep what was copied, which the next import reuses)`,
    );
  }
}

/** A table's tallies differ after the copy: the transaction was rolled back. */
export class ImportMismatchError extends Error {
  override name = 'ImportMismatchError';
  constructor(readonly tables: string[]) {
    super(`the copy of ${tables.join(', ')} differs from the source: nothing was imported (rolled back)`);
  }
}

export interface ClusterImportOptions {
  /** The single machine's data directory. */
  from: string;
  /** The cluster's database (SITEWARDEN_DATABASE_URL). */
  databaseUrl: string;
  /** The cluster's key (SITEWARDEN_SECRET_KEY), decoded. */
  secretKey: Buffer;
  /** The cluster's blob store (SITEWARDEN_BLOB_*). */
  blobStore: StoreLocation;
  out: (line: string) => void;
}

interface ImportContext extends ClusterImportOptions {
  source: Database.Database;
  target: StateDatabase;
}

/** Moves the database and the blobs; answers the exit status (0: everything moved, each part verified). */
export async function importDataDir(options: ClusterImportOptions): Promise<number> {
  const path = join(options.from, DATABASE_FILE);
  if (!existsSync(path))
    throw new ImportRefusedError(`${options.from} holds no Sitewarden database (${DATABASE_FILE})`);
  const lock = lockDataDir(options.from);
  try {
    const source = new Database(path, { readonly: true, fileMustExist: true });
    try {
      checkSchema(source, options.from);
      checkKey(source, options);
      // One read transaction: every table as of one instant.
      source.exec('BEGIN');
      const target = await openStateDatabase({ url: options.databaseUrl, sqlitePath: '', poolSize: 1 });
      try {
        await importDatabase({ ...options, source, target });
        options.out(`imported ${options.from} into the cluster`);
        return 0;
      } finally {
        await target.close();
      }
    } finally {
      source.close();
    }
  } finally {
    lock.release();
  }
}

/** The source's schema must be this version's: the rows are read through this version's tables. */
function checkSchema(source: Database.Database, from: string): void {
  const gap = migrationGap(source);
  if (gap.newer)
    throw new ImportRefusedError(`${from} was migrated by a newer version of Sitewarden: import it with that version`);
  if (gap.pending > 0)
    throw new ImportRefusedError(
      `${from} lacks ${gap.pending} migration(s) of this version: start this version on it once, or run \`sitewarden migrate\` with SITEWARDEN_DATA_DIR=${from} and without SITEWARDEN_DATABASE_URL, then import`,
    );
}

/** The sealed columns are copied as they are: the cluster's key must open one stored value of each. */
function checkKey(source: Database.Database, options: ClusterImportOptions): void {
  const box = createSecretBox(options.secretKey);
  const db = drizzle(source);
  for (const { what, column } of SEALED_COLUMNS) {
    const row = db
      .select({ sealed: column })
      .from(column.table as SQLiteTable)
      .where(isNotNull(column))
      .limit(1)
      .get() as { sealed: string } | undefined;
    if (!row) continue;
    try {
      box.open(row.sealed);
    } catch {
      throw new ImportRefusedError(
        `SITEWARDEN_SECRET_KEY does not open ${what} stored in ${options.from}: the cluster's key must be the one the ` +
          `single machine used (its SITEWARDEN_SECRET_KEY, or the key in ${join(options.from, 'secret.key')})`,
      );
    }
  }
}

/**
 * Every table, in one transaction on the cluster's database: refused if a table holds a row; the tables' triggers
 * off while the rows go in (the read models are copied, not rebuilt); identities moved past the ids copied; each
 * table's tally read back and compared with the source's; then the blobs moved, and only then the commit.
 */
async function importDatabase(context: ImportContext): Promise<void> {
  const { source, target, out } = context;
  const names = IMPORTED_TABLES.map((pair) => pair.name);
  const used = new Map(
    (source.prepare('select name, seq from sqlite_sequence').all() as { name: string; seq: number }[]).map((row) => [
      row.name,
      row.seq,
    ]),
  );
  const tallies = await target.transaction(async (tx) => {
    const restoreTriggers = await suppressTriggers(tx, names).catch((error: unknown) => {
      throw new ImportRefusedError(
        `the import turns the tables’ triggers off while it copies, which needs the role that owns them (the one the migrations ran as): ${driverReason(error)}`,
      );
    });
    const held = await tablesHoldingRows(tx, names);
    if (held.length > 0)
      throw new ImportRefusedError(
        `the cluster’s database already holds rows (${held.slice(0, 3).join(', ')}${held.length > 3 ? `, ${held.length - 3} more tables` : ''}): an import would mix two histories; import into a new, empty database, before any process of the cluster starts`,
      );
    const copied = new Map<string, TableTally>();
    for (const pair of IMPORTED_TABLES) copied.set(pair.name, await copyRefusedClearly(source, tx, pair));
    await restoreTriggers();
    await resetIdentities(tx, names, used);
    const rows = [];
    for (const pair of IMPORTED_TABLES)
      rows.push({ name: pair.name, source: copied.get(pair.name)!, target: await tallyOnPostgres(tx, pair) });
    printTallies(rows, out);
    const differing = rows.filter((row) => !sameTally(row.source, row.target)).map((row) => row.name);
    if (differing.length > 0) throw new ImportMismatchError(differing);
    printBlobsMoved(await moveBlobs(context), out);
    return rows;
  });
  const total = tallies.reduce((sum, row) => sum + row.source.rows, 0);
  out(`moved: the database, ${tallies.length} tables, ${total} rows, each verified`);
}

/** What the data directory keeps in files (where services.ts keeps them on one machine), and their prefixes in the cluster. */
const FILE_BLOBS = [
  { what: 'audit reports', dir: join('performance', 'reports'), prefix: 'reports/' },
  { what: 'screenshots', dir: 'safe-updates', prefix: 'screenshots/' },
] as const;

/** One kind of blob moved: how many, and the bytes sent to the blob store. */
interface BlobsMoved {
  what: string;
  count: number;
  bytes: number;
}

/** The blob step, its failure said as one: the transaction it runs in rolls back. */
async function moveBlobs({ from, source, blobStore, secretKey }: ImportContext): Promise<BlobsMoved[]> {
  const shared = createSharedBlobs(blobStore);
  try {
    const moved: BlobsMoved[] = [
      {
        what: 'backups',
        ...(await importBackups({ dataDir: from, source, blobs: shared.under('backups/'), secretKey })),
      },
    ];
    for (const { what, dir, prefix } of FILE_BLOBS)
      moved.push({ what, ...(await copyBlobs(createDirectoryBackend(join(from, dir)), shared.under(prefix))) });
    return moved;
  } catch (error) {
    throw new ImportBlobsError((error as Error).message);
  }
}

function printBlobsMoved(moved: readonly BlobsMoved[], out: (line: string) => void): void {
  for (const { what, count, bytes } of moved)
    out(`moved: ${what}, ${count}${count > 0 ? ` (${bytes} bytes sent), each read back from the blob store` : ''}`);
}

/**
 * A table copied, or a one-line refusal naming it: the driver's reason only, since drizzle's own message lists the
 * statement's parameters (sealed credentials, password hashes).
 */
async function copyRefusedClearly(source: Database.Database, tx: StateDb, pair: TablePair): Promise<TableTally> {
  try {
    return await copyTable(source, tx, pair);
  } catch (error) {
    throw new ImportRefusedError(
      `the cluster’s database refused a row of ${pair.name}: ${driverReason(error)}; nothing was imported (rolled back)`,
    );
  }
}

/** The driver's words for a failed statement (drizzle's own message lists its parameters). */
const driverReason = (error: unknown): string => (((error as { cause?: unknown }).cause ?? error) as Error).message;

const sameTally = (a: TableTally, b: TableTally) => a.rows === b.rows && a.digest === b.digest;

function printTallies(
  rows: ReadonlyArray<{ name: string; source: TableTally; target: TableTally }>,
  out: (line: string) => void,
): void {
  const width = Math.max(...rows.map((row) => row.name.length));
  out(`${'table'.padEnd(width)}  ${'rows'.padStart(10)}  digest        verified`);
  for (const { name, source, target } of rows) {
    const verdict = sameTally(source, target)
      ? 'yes'
      : `NO: cluster has ${target.rows} rows, digest ${target.digest.slice(0, 12)}`;
    out(`${name.padEnd(width)}  ${String(source.rows).padStart(10)}  ${source.digest.slice(0, 12)}  ${verdict}`);
  }
}
