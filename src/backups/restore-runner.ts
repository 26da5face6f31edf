import type { BackupConnector } from '../wordpress/connector-client.js';
import {
  CHUNK_BYTES,
  checkManifestFiles,
  pairByPath,
  type ManifestFileEntry,
  type OpenedManifest,
} from './manifest.js';
import { readAhead } from './read-ahead.js';
import { BATCH_BYTES } from './table-reader.js';
import { objectStoreProblems, type ObjectStore } from './object-store.js';
import { isProblem } from '../shared/errors.js';
import { backupsProblems } from './backups.errors.js';
import { schemaOf, storedBatchRows } from './sql-dump.js';

export interface RestoreProgress {
  filesRestored: number;
  filesDeleted: number;
  tablesRestored: number;
  bytesTransferred: number;
}

/** Never sent: the site's configuration and the connector the daemon talks through (the connector refuses them too). */
const PROTECTED = [
  /^wp-config\.php$/,
  /^wp-content\/plugins\/sitewarden-connector(\/|$)/,
  /^wp-content\/sitewarden-restore-/,
];
const isProtected = (path: string) => PROTECTED.some((pattern) => pattern.test(path));
const DELETIONS_PER_REQUEST = 500;

/**
 * Brings a site back to `target`, sending only what differs from `current` (the pre-restore
 * backup of the site as it is now): changed and missing files, deletions of files the backup
 * did not have, and changed tables, rebuilt beside the live ones and swapped in at the end.
 */
export async function runRestore({
  connector,
  store,
  target,
  current,
  onProgress,
}: {
  connector: BackupConnector;
  store: ObjectStore;
  target: OpenedManifest;
  current: OpenedManifest;
  onProgress: (progress: RestoreProgress) => void;
}): Promise<RestoreProgress> {
  // Both are walked again below, part by part: an unsafe path or a broken part anywhere refuses the restore now, before anything is sent.
  await checkManifestFiles(target);
  await checkManifestFiles(current);
  // Backups from before schemas were parsed hold the site's CREATE TABLE: parsed (or refused) before anything is sent, never sent itself.
  const schemas = target.tables.map(schemaOf);
  await connector.ensure('restore');
  const progress: RestoreProgress = { filesRestored: 0, filesDeleted: 0, tablesRestored: 0, bytesTransferred: 0 };
  // One buffer for every chunk: sent one at a time, so reusing it spares an 8 MiB allocation (and its copy) per chunk.
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  const { restoreId } = await connector.begin();
  try {
    // Both manifests in path order, side by side: neither is held whole, however many files the site has.
    // Deletions are only planned (the site carries them out when the restore finishes), so they go as they are found.
    let deletions: string[] = [];
    const planDeletions = async () => {
      if (deletions.length === 0) return;
      await connector.planDeletions(restoreId, deletions);
      progress.filesDeleted += deletions.length;
      deletions = [];
    };
    // Objects are read ahead of the site's writes where the store asks for it (an offsite bucket: a round
    // trip per object); otherwise one at a time into the one buffer.
    let offset = 0;
    for await (const [step, bytes] of readSteps(store, fileSteps(target, current), buffer)) {
      if (step.kind === 'delete') {
        if (deletions.push(step.path) >= DELETIONS_PER_REQUEST) await planDeletions();
      } else if (step.kind === 'restored') {
        offset = 0;
        progress.filesRestored++;
        onProgress({ ...progress });
      } else {
        await connector.writeFile(restoreId, step.file.path, offset, bytes!, step.file.mtime);
        offset += bytes!.length;
        progress.bytesTransferred += bytes!.length;
      }
    }
    await planDeletions();

    const liveTables = new Map(current.tables.map((table) => [table.name, table]));
    for (const [index, table] of target.tables.entries()) {
      const live = liveTables.get(table.name);
      const schema = schemas[index]!;
      if (
        live &&
        table.checksum !== null &&
        live.checksum === table.checksum &&
        live.rows === table.rows &&
        live.schema &&
        JSON.stringify(live.schema) === JSON.stringify(schema)
      )
        continue;
      await connector.createTable(restoreId, table.name, schema);
      const columns = schema.columns.map((column) => column.name);
      for await (const [, stored] of readSteps(store, batchSteps(table.name, table.batches), buffer)) {
        const sql = stored!.toString('utf8');
        const rows = storedBatchRows(sql, table.name, columns);
        const inserted = await connector.insertRows(restoreId, table.name, sql);
        if (inserted.rows !== rows)
          throw backupsProblems.tableInvalid.create(
            `the site inserted ${inserted.rows} of the ${rows} rows of a batch of ${JSON.stringify(table.name)}`,
            { table: table.name },
          );
        progress.bytesTransferred += sql.length;
      }
      progress.tablesRestored++;
      onProgress({ ...progress });
    }

    // The site's tables the backup did not have are dropped, so the database is the backup's exactly.
    const tables = target.tables.map((table) => table.name);
    // Finishing is journaled on the site: a second call completes an interrupted first one.
    await connector.finish(restoreId, tables).catch(() => connector.finish(restoreId, tables));
    onProgress({ ...progress });
    return progress;
  } catch (error) {
    // A finish that got past its table swap is completed by the abort rather than left half done.
    const settled = await connector.abort(restoreId).catch(() => null);
    if (settled?.completed) {
      onProgress({ ...progress });
      return progress;
    }
    throw error;
  }
}

/**
 * A missing or corrupt object stops a restore: said in the site's terms (the file or table it is
 * part of) before the store's own words (the object and, offsite, its key in the bucket).
 */
export const lostPart =
  (what: string) =>
  (error: unknown): never => {
    // The local store's missing object is the file system's ENOENT; a corrupt one (or any offsite one) the store's problem.
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    if (!missing && !isProblem(error, objectStoreProblems.corrupt)) throw error;
    throw objectStoreProblems.corrupt.create(
      `${what} cannot be restored from this backup: ${missing ? 'its object is missing from the local store' : (error as Error).message}. Verify the backup to list every file and table it lost`,
      { ...(missing ? {} : (error as { extensions?: Record<string, unknown> }).extensions), lost: what },
      { cause: error },
    );
  };

/** An object to read: its hash, its expected size, and what it is part of (said when it is lost). */
type Chunk = { kind: 'chunk'; hash: string; bytes: number; what: string };
type Step = { kind: 'delete'; path: string } | (Chunk & { file: ManifestFileEntry }) | { kind: 'restored' };

/** What restoring the files takes, in order: deletions to plan, and each changed file's chunks, then that it is done. */
async function* fileSteps(target: OpenedManifest, current: OpenedManifest): AsyncGenerator<Step> {
  for await (const [file, now] of pairByPath(target.files(), current.files())) {
    if (!file) {
      if (!isProtected(now!.path)) yield { kind: 'delete', path: now!.path };
      continue;
    }
    if (isProtected(file.path) || now?.sha256 === file.sha256) continue;
    for (const [index, hash] of file.chunks.entries())
      yield {
        kind: 'chunk',
        file,
        hash,
        bytes: Math.min(CHUNK_BYTES, file.size - index * CHUNK_BYTES),
        what: `the site file ${file.path}`,
      };
    yield { kind: 'restored' };
  }
}

/** A table's batches of SQL, as chunks to read (a batch is at most BATCH_BYTES of text). */
async function* batchSteps(table: string, batches: readonly string[]): AsyncGenerator<Chunk> {
  for (const hash of batches) yield { kind: 'chunk', hash, bytes: BATCH_BYTES, what: `the database table ${table}` };
}

/**
 * The steps with each chunk's content, read as the store asks: ahead of the reader (store.readAhead: an offsite
 * bucket), or one at a time into `buffer` (the local store: a read from disk does not wait on the network, and one
 * buffer spares an 8 MiB allocation per chunk; the next read starts only once the reader is done with the last).
 */
function readSteps<S extends Step | Chunk>(store: ObjectStore, steps: AsyncIterable<S>, buffer: Buffer) {
  const load = (step: S) => {
    if (step.kind !== 'chunk') return null;
    const reading = store.readAhead ? store.read(step.hash) : readChunk(store, step.hash, buffer);
    return reading.catch(lostPart(step.what));
  };
  const weight = (step: S) => (step.kind === 'chunk' ? step.bytes : 0);
  return readAhead(steps, load, weight, store.readAhead ?? { objects: 1, bytes: Infinity });
}

/** A stored chunk's content in `buffer` (verified against its hash while read); a larger one than expected gets its own buffer. */
async function readChunk(store: ObjectStore, hash: string, buffer: Buffer): Promise<Buffer> {
  let length = 0;
  let overflow: Buffer[] | null = null;
  for await (const piece of store.get(hash)) {
    const bytes = piece as Buffer;
    if (!overflow && length + bytes.length <= buffer.length) {
      bytes.copy(buffer, length);
      length += bytes.length;
    } else {
      overflow ??= [Buffer.from(buffer.subarray(0, length))];
      overflow.push(bytes);
    }
  }
  return overflow ? Buffer.concat(overflow) : buffer.subarray(0, length);
}
