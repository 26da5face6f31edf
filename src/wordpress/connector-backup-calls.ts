/**
 * The connector's backup/... and restore/... calls: pages of the site's files, file ranges and
 * bundles streamed under a byte limit, tables and rows, and the staged steps of a restore.
 */
import type { Readable } from 'node:stream';
import {
  BUNDLE_FRAMING_BYTES,
  DeletionsPlanned,
  FilesPage,
  InsertedAnswer,
  parseBundle,
  RestoreAborted,
  RestoreBegun,
  RestoreFinished,
  RowsAnswer,
  TablesAnswer,
  TableStaged,
  type FinishedRestore,
  type RowsCursor,
  type SiteFileEntry,
} from './connector-backup-schemas.js';
import { CONNECTOR_NAMESPACE, type ConnectorGate } from './connector-gate.js';
import type { WordPressSession } from './wordpress-client.js';

export function createBackupCalls(session: WordPressSession, { ensure }: ConnectorGate, timeoutMs: number) {
  const backup = (path: string) => `${CONNECTOR_NAMESPACE}/${path}`;

  return {
    /** Refuses (connector-outdated) a connector older than the backups (or restore) feature needs; call before the first step. */
    ensure: (feature: 'backups' | 'restore') => ensure(feature),

    /** A page of the site's files; `known` ([path, size, mtime, sha256]) spares hashing files whose size and mtime did not change. */
    files: (
      cursor: string,
      limit: number,
      known: [string, number, number, string][],
    ): Promise<{ files: SiteFileEntry[]; next: string | null }> =>
      session.call('POST', backup('backup/files'), { json: { cursor, limit, known }, timeoutMs, schema: FilesPage }),

    /** `length` bytes of a file from `offset`, streamed; a body longer than that fails with site-response-too-large before it is passed on. */
    fileRange: (path: string, offset: number, length: number): Promise<Readable> =>
      session.callStream(backup('backup/file'), { query: { path, offset, length }, timeoutMs, maxBytes: length }),

    /**
     * Many small files in one request, `expectedBytes` in all as listed (a longer body fails);
     * null for a file that is gone, or too large to bundle now. `onBytes` sees every byte received.
     * With `receiveInto`, the body is copied as it arrives into the buffer it gives for the most
     * the body may hold, and the files are views of that buffer (the caller may reuse it once it
     * is done with them): no chunk outlives its copy, and no new buffer is made per bundle.
     */
    async bundle(
      paths: string[],
      expectedBytes: number,
      onBytes: (bytes: number) => void = () => {},
      receiveInto?: (maxBytes: number) => Buffer,
    ): Promise<(Buffer | null)[]> {
      const maxBytes = expectedBytes + paths.length * BUNDLE_FRAMING_BYTES;
      const body = await session.callStream(backup('backup/bundle'), {
        method: 'POST',
        json: { paths },
        timeoutMs,
        maxBytes,
      });
      const into = receiveInto?.(maxBytes);
      if (into && into.length >= maxBytes) {
        let length = 0;
        for await (const chunk of body) {
          const bytes = chunk as Buffer;
          onBytes(bytes.length);
          // callStream fails a body past maxBytes before passing it on; checked again so a copy never runs past the buffer.
          if (length + bytes.length > into.length) throw new Error('the bundle body is longer than its limit');
          bytes.copy(into, length);
          length += bytes.length;
        }
        return parseBundle(into.subarray(0, length), paths.length);
      }
      const chunks: Buffer[] = [];
      for await (const chunk of body) {
        onBytes((chunk as Buffer).length);
        chunks.push(chunk as Buffer);
      }
      return parseBundle(Buffer.concat(chunks), paths.length);
    },

    tables: () => session.call('GET', backup('backup/tables'), { timeoutMs, schema: TablesAnswer }),
    /** At most `limit` rows in at most `bytes` bytes of SQL, unless one row alone is larger. */
    rows: (table: string, after: RowsCursor | null, limit: number, bytes: number) =>
      session.call('GET', backup('backup/rows'), {
        query: { table, after: after ? JSON.stringify(after) : undefined, limit, bytes },
        timeoutMs,
        schema: RowsAnswer,
      }),

    begin: () => session.call('POST', backup('restore/begin'), { timeoutMs, schema: RestoreBegun }),
    async writeFile(restore: string, path: string, offset: number, bytes: Buffer, mtime: number): Promise<void> {
      await session.callRaw('POST', backup('restore/file'), {
        query: { restore, path, offset, mtime },
        body: bytes,
        timeoutMs,
      });
    },
    planDeletions: (restore: string, paths: string[]) =>
      session.call('POST', backup('restore/delete'), { json: { restore, paths }, timeoutMs, schema: DeletionsPlanned }),
    /** The staged table is created from the schema as data: the connector writes the statement. */
    createTable: (restore: string, table: string, schema: object) =>
      session.call('POST', backup('restore/table'), {
        json: { restore, table, schema },
        timeoutMs,
        schema: TableStaged,
      }),
    insertRows: (restore: string, table: string, sql: string) =>
      session.call('POST', backup('restore/rows'), {
        json: { restore, table, sql },
        timeoutMs,
        schema: InsertedAnswer,
      }),
    /**
     * Swaps the staged tables in, drops the site's tables not in `tables` (the backup's complete
     * list), moves the files into place. Safe to call again after an interruption: the connector
     * keeps a journal and completes what the first call began.
     */
    finish: (restore: string, tables: string[]): Promise<FinishedRestore> =>
      session.call('POST', backup('restore/finish'), { json: { restore, tables }, timeoutMs, schema: RestoreFinished }),
    /** Discards what was staged; a finish already past its table swap is completed instead (`completed: true`). */
    abort: (restore: string) =>
      session.call('POST', backup('restore/abort'), { json: { restore }, timeoutMs, schema: RestoreAborted }),
  };
}
