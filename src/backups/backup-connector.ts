import type { Readable } from 'node:stream';
import { z } from 'zod';
import type { WordPressSession } from '../wordpress/wordpress-client.js';
import { CONNECTOR_NAMESPACE, createConnectorGate } from '../wordpress/connector-client.js';
import type { TableSchema } from './sql-schema.js';

/** The connector's backup/... and restore/... routes (connector/includes/class-sitewarden-connector-backup-routes.php). */
export interface SiteFileEntry {
  path: string;
  size: number;
  mtime: number;
  sha256: string | null;
}

const SiteTableSchema = z.union([
  /** `bytes`: the server's estimate of the table's data on disk, which sizes the backup's budget. */
  z.object({
    name: z.string(),
    create: z.string(),
    rows: z.number().int().min(0),
    primaryKey: z.array(z.string()).max(64),
    checksum: z.string().nullable(),
    bytes: z.number().int().min(0),
  }),
  /** A table the connector could not read (or that is not a plain table): the backup fails naming it. */
  z.object({ name: z.string(), error: z.string() }),
]);
const TablesAnswer = z.object({ tables: z.array(SiteTableSchema).max(100_000) });
const RowsCursorSchema = z.union([
  z.object({ key: z.array(z.string()).min(1).max(64) }).strict(),
  z.object({ offset: z.number().int().min(0) }).strict(),
]);
const RowsAnswer = z.object({ sql: z.string(), rows: z.number().int().min(0), next: RowsCursorSchema.nullable() });
const InsertedAnswer = z.object({ rows: z.number().int().min(0) });
const RestoreBegun = z.object({ restoreId: z.string().regex(/^[a-z0-9]{1,64}$/) });
const DeletionsPlanned = z.object({ planned: z.number().int().min(0) });
const TableStaged = z.object({ table: z.string(), staged: z.literal(true) });
const RestoreFinished = z.object({
  tables: z.number().int().min(0),
  dropped: z.number().int().min(0),
  moved: z.number().int().min(0),
  deleted: z.number().int().min(0),
});
const RestoreAborted = z.object({ aborted: z.boolean(), completed: z.boolean().optional() });

export type SiteTable = z.infer<typeof SiteTableSchema>;
export type RowsCursor = z.infer<typeof RowsCursorSchema>;

export interface FinishedRestore {
  tables: number;
  dropped: number;
  moved: number;
  deleted: number;
}

const FilesPage = z.object({
  files: z.array(
    z.object({
      path: z.string(),
      size: z.number().int().min(0),
      mtime: z.number().int(),
      sha256: z
        .string()
        .regex(/^[0-9a-f]{64}$/)
        .nullable(),
    }),
  ),
  next: z.string().nullable(),
});

/** A bundle's framing beyond the files' bytes: one length line (at most 20 digits and a newline) per file. */
const BUNDLE_FRAMING_BYTES = 24;

export function createBackupConnector(session: WordPressSession, { timeoutMs }: { timeoutMs: number }) {
  const route = (path: string) => `${CONNECTOR_NAMESPACE}/${path}`;
  const ensure = createConnectorGate(session);
  return {
    /** Refuses (connector-outdated) a connector older than the backups (or restore) feature needs; call before the first step. */
    ensure: (feature: 'backups' | 'restore') => ensure(feature),

    /** A page of the site's files; `known` ([path, size, mtime, sha256]) spares hashing files whose size and mtime did not change. */
    files: (
      cursor: string,
      limit: number,
      known: [string, number, number, string][],
    ): Promise<{ files: SiteFileEntry[]; next: string | null }> =>
      session.call('POST', route('backup/files'), { json: { cursor, limit, known }, timeoutMs, schema: FilesPage }),

    /** `length` bytes of a file from `offset`, streamed; a body longer than that fails with site-response-too-large before it is passed on. */
    fileRange: (path: string, offset: number, length: number): Promise<Readable> =>
      session.callStream(route('backup/file'), { query: { path, offset, length }, timeoutMs, maxBytes: length }),

    /**
     * Many small files in one request, `expectedBytes` in all as listed (a longer body fails);
     * null for a file that is gone, or too large to bundle now. `onBytes` sees every byte received.
     */
    async bundle(
      paths: string[],
      expectedBytes: number,
      onBytes: (bytes: number) => void = () => {},
    ): Promise<(Buffer | null)[]> {
      const body = await session.callStream(route('backup/bundle'), {
        method: 'POST',
        json: { paths },
        timeoutMs,
        maxBytes: expectedBytes + paths.length * BUNDLE_FRAMING_BYTES,
      });
      const chunks: Buffer[] = [];
      for await (const chunk of body) {
        onBytes((chunk as Buffer).length);
        chunks.push(chunk as Buffer);
      }
      return parseBundle(Buffer.concat(chunks), paths.length);
    },

    tables: () => session.call('GET', route('backup/tables'), { timeoutMs, schema: TablesAnswer }),
    /** At most `limit` rows in at most `bytes` bytes of SQL, unless one row alone is larger. */
    rows: (table: string, after: RowsCursor | null, limit: number, bytes: number) =>
      session.call('GET', route('backup/rows'), {
        query: { table, after: after ? JSON.stringify(after) : undefined, limit, bytes },
        timeoutMs,
        schema: RowsAnswer,
      }),

    begin: () => session.call('POST', route('restore/begin'), { timeoutMs, schema: RestoreBegun }),
    async writeFile(restore: string, path: string, offset: number, bytes: Buffer, mtime: number): Promise<void> {
      await session.callRaw('POST', route('restore/file'), {
        query: { restore, path, offset, mtime },
        body: bytes,
        timeoutMs,
      });
    },
    planDeletions: (restore: string, paths: string[]) =>
      session.call('POST', route('restore/delete'), { json: { restore, paths }, timeoutMs, schema: DeletionsPlanned }),
    /** The staged table is created from the schema as data: the connector writes the statement. */
    createTable: (restore: string, table: string, schema: TableSchema) =>
      session.call('POST', route('restore/table'), {
        json: { restore, table, schema },
        timeoutMs,
        schema: TableStaged,
      }),
    insertRows: (restore: string, table: string, sql: string) =>
      session.call('POST', route('restore/rows'), { json: { restore, table, sql }, timeoutMs, schema: InsertedAnswer }),
    /**
     * Swaps the staged tables in, drops the site's tables not in `tables` (the backup's complete
     * list), moves the files into place. Safe to call again after an interruption: the connector
     * keeps a journal and completes what the first call began.
     */
    finish: (restore: string, tables: string[]): Promise<FinishedRestore> =>
      session.call('POST', route('restore/finish'), { json: { restore, tables }, timeoutMs, schema: RestoreFinished }),
    /** Discards what was staged; a finish already past its table swap is completed instead (`completed: true`). */
    abort: (restore: string) =>
      session.call('POST', route('restore/abort'), { json: { restore }, timeoutMs, schema: RestoreAborted }),
  };
}

export type BackupConnector = ReturnType<typeof createBackupConnector>;

/** The bundle framing: per file a decimal length line (negative: no content), then the bytes. */
export function parseBundle(body: Buffer, count: number): (Buffer | null)[] {
  const files: (Buffer | null)[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    const newline = body.indexOf(0x0a, at);
    const length = newline < 0 ? NaN : Number(body.subarray(at, newline).toString('ascii'));
    if (!Number.isInteger(length) || newline + 1 + Math.max(length, 0) > body.length)
      throw new Error(`the site's file bundle is cut short or malformed at file ${i + 1} of ${count}`);
    at = newline + 1;
    if (length < 0) files.push(null);
    else {
      files.push(body.subarray(at, at + length));
      at += length;
    }
  }
  if (at !== body.length)
    throw new Error(`the site's file bundle holds ${body.length - at} bytes more than its ${count} files`);
  return files;
}
