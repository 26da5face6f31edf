import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** A file of the fake site: what it holds, and (to misbehave) what it declares or sends instead. */
export interface FakeFile {
  content: Buffer;
  mtime: number;
  /** Declared in the listing in place of the content's own size and hash. */
  declared?: { size?: number; sha256?: string };
  /** Sent in place of the content (bundle and ranges): other bytes, or WordPress's HTML error page with HTTP 200. */
  served?: Buffer | 'html';
}

interface FakeTable {
  name: string;
  create: string;
  rows: number;
  primaryKey: string[];
  checksum: string | null;
  /** What the site says its data takes on disk. */
  bytes: number;
  sql: string;
}

/** Site-wide misbehaviours; each is off by default. */
interface Misbehaviour {
  /** backup/files: 'stuck-cursor' answers the same page and cursor forever; 'endless' makes up new paths forever; 'oversized-page' answers more entries than asked. */
  listing?: 'honest' | 'stuck-cursor' | 'endless' | 'oversized-page';
  /** backup/file sends this many bytes more than the range asked. */
  rangeExtraBytes?: number;
  /** Routes (e.g. 'sitewarden/v1/backup/file') that start answering and then never finish. */
  stall?: string[];
}

/** One request as the fake's answers see it, its body already read. */
export interface FakeRequest {
  method: string;
  /** The REST route without the leading slash, e.g. `sitewarden/v1/backup/files`. */
  route: string;
  query: URLSearchParams;
  json: unknown;
  req: IncomingMessage;
  res: ServerResponse;
}

const HTML_ERROR = Buffer.from(
  '<!DOCTYPE html><html><head><title>WordPress &rsaquo; Error</title></head><body id="error-page"><p>There has been a critical error on this website.</p></body></html>',
);
const HONEST_FILES: Record<string, string> = {
  'index.php': '<?php require __DIR__ . "/wp-blog-header.php";\n',
  'wp-config.php': "<?php define( 'DB_NAME', 'fake' );\n",
  'wp-content/uploads/2026/hello.txt': 'hello from the fake site\n',
};

export const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

export const sendJson = (res: ServerResponse, status: number, body: unknown) =>
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

/**
 * What the connector's backup routes read, from memory: a small honest site (three files, one
 * table) whose files and tables tests edit, and the misbehaviours the listing and ranges can be switched into.
 */
export function createBackupSource(initial: Record<string, Buffer | string> = HONEST_FILES) {
  const files = new Map<string, FakeFile>();
  const setFile = (path: string, content: Buffer | string, extra: Partial<FakeFile> = {}) =>
    files.set(path, { content: Buffer.from(content), mtime: 1_700_000_000, ...extra });
  for (const [path, content] of Object.entries(initial)) setFile(path, content);
  const tables: FakeTable[] = [
    {
      name: 'wp_options',
      create:
        'CREATE TABLE `wp_options` (\n  `option_id` bigint unsigned NOT NULL AUTO_INCREMENT,\n  `option_name` varchar(191) NOT NULL,\n  PRIMARY KEY (`option_id`)\n) ENGINE=InnoDB',
      rows: 1,
      primaryKey: ['option_id'],
      checksum: '1',
      bytes: 16384,
      sql: `INSERT INTO \`wp_options\` (\`option_id\`,\`option_name\`) VALUES\n(1,X'${Buffer.from('blogname').toString('hex')}');\n`,
    },
  ];
  const misbehaviour: Misbehaviour = {};

  const declared = (path: string, file: FakeFile) => ({
    path,
    size: file.declared?.size ?? file.content.length,
    mtime: file.mtime,
    sha256: file.declared?.sha256 ?? sha256(file.content),
  });
  const served = (file: FakeFile) => (file.served === 'html' ? HTML_ERROR : (file.served ?? file.content));

  function listing({ cursor, limit }: { cursor: string; limit: number }) {
    if (misbehaviour.listing === 'endless') {
      const next = `${cursor || 'wp-content/endless/'}a`;
      return { files: [{ path: next, size: 0, mtime: 1_700_000_000, sha256: sha256('') }], next };
    }
    const after = [...files.keys()].sort(byBytes).filter((path) => byBytes(path, cursor) > 0);
    if (misbehaviour.listing === 'stuck-cursor')
      return { files: after.slice(0, 1).map((path) => declared(path, files.get(path)!)), next: cursor };
    if (misbehaviour.listing === 'oversized-page') {
      const many = Array.from({ length: limit * 5 + 1 }, (_, i) => ({
        path: `wp-content/many/${String(i).padStart(6, '0')}`,
        size: 0,
        mtime: 1_700_000_000,
        sha256: sha256(''),
      }));
      return { files: many, next: null };
    }
    const page = after.slice(0, limit);
    return {
      files: page.map((path) => declared(path, files.get(path)!)),
      next: after.length > limit ? page.at(-1)! : null,
    };
  }

  const answers: Record<string, (request: FakeRequest) => void> = {
    'POST sitewarden/v1/backup/files': ({ res, json }) => {
      const body = json as { cursor?: string; limit?: number };
      sendJson(res, 200, listing({ cursor: body.cursor ?? '', limit: body.limit ?? 1000 }));
    },
    'POST sitewarden/v1/backup/bundle': ({ res, json }) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      for (const path of (json as { paths: string[] }).paths) {
        const file = files.get(path);
        if (!file) res.write('-1\n');
        else if (file.served === 'html') res.write(HTML_ERROR);
        else res.write(Buffer.concat([Buffer.from(`${served(file).length}\n`), served(file)]));
      }
      res.end();
    },
    'GET sitewarden/v1/backup/file': ({ res, query }) => {
      const file = files.get(query.get('path') ?? '');
      if (!file)
        return sendJson(res, 404, {
          code: 'sitewarden_file_not_found',
          message: 'There is no file to back up.',
          data: { status: 404 },
        });
      const offset = Number(query.get('offset') ?? 0);
      const bytes = served(file);
      const range =
        file.served === 'html' ? bytes : bytes.subarray(offset, offset + Number(query.get('length') ?? bytes.length));
      res.writeHead(200, { 'content-type': file.served === 'html' ? 'text/html' : 'application/octet-stream' });
      res.end(Buffer.concat([range, Buffer.alloc(misbehaviour.rangeExtraBytes ?? 0, 0x41)]));
    },
    'GET sitewarden/v1/backup/tables': ({ res }) =>
      sendJson(res, 200, { tables: tables.map(({ sql: _sql, ...table }) => table) }),
    'GET sitewarden/v1/backup/rows': ({ res, query }) => {
      const table = tables.find((candidate) => candidate.name === query.get('table'));
      if (!table)
        return sendJson(res, 404, {
          code: 'sitewarden_table_not_found',
          message: 'No such table.',
          data: { status: 404 },
        });
      sendJson(res, 200, { sql: table.sql, rows: table.rows, next: null });
    },
  };
  return { files, tables, setFile, misbehaviour, answers };
}
