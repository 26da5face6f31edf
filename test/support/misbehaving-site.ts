import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startFakeSite } from './fake-site.js';

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

interface FakeRequest {
  method: string;
  /** The REST route without the leading slash, e.g. `sitewarden/v1/backup/files`. */
  route: string;
  query: URLSearchParams;
  json: unknown;
  req: IncomingMessage;
  res: ServerResponse;
}

/** Answers a route in place of the honest fake; return false to let the honest one answer. */
export type RouteOverride = (request: FakeRequest) => boolean | Promise<boolean>;

const FAKE_USERNAME = 'admin';
const FAKE_APPLICATION_PASSWORD = 'abcd efgh ijkl mnop qrst uvwx';
const CAPABILITIES = [
  'activate_plugins',
  'install_plugins',
  'update_plugins',
  'delete_plugins',
  'switch_themes',
  'update_themes',
  'delete_themes',
  'manage_options',
];
const HTML_ERROR = Buffer.from(
  '<!DOCTYPE html><html><head><title>WordPress &rsaquo; Error</title></head><body id="error-page"><p>There has been a critical error on this website.</p></body></html>',
);

export const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * A loopback WordPress with the Sitewarden connector, from memory: the REST index (application
 * passwords), users/me as an administrator, sitewarden/v1/info (connector 1.2.0 with backups and
 * restore) and the backup routes, serving an honest small site until it is told to misbehave
 * (`misbehaviour`, per-file `declared`/`served`, or a per-route `override`). Connect it with
 * `POST /api/sites { url, username: FAKE_USERNAME, applicationPassword: FAKE_APPLICATION_PASSWORD }`.
 */
export async function startMisbehavingSite({ files: initial }: { files?: Record<string, Buffer | string> } = {}) {
  const files = new Map<string, FakeFile>();
  const setFile = (path: string, content: Buffer | string, extra: Partial<FakeFile> = {}) =>
    files.set(path, { content: Buffer.from(content), mtime: 1_700_000_000, ...extra });
  const honest: Record<string, string> = {
    'index.php': '<?php require __DIR__ . "/wp-blog-header.php";\n',
    'wp-config.php': "<?php define( 'DB_NAME', 'fake' );\n",
    'wp-content/uploads/2026/hello.txt': 'hello from the fake site\n',
  };
  for (const [path, content] of Object.entries(initial ?? honest)) setFile(path, content);
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
  const overrides = new Map<string, RouteOverride>();
  const requests: string[] = [];
  let url = '';

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
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

  const routes: Record<string, (request: FakeRequest) => void> = {
    '': ({ res }) =>
      send(res, 200, {
        name: 'Misbehaving',
        home: url,
        url,
        namespaces: ['wp/v2', 'sitewarden/v1'],
        authentication: {
          'application-passwords': { endpoints: { authorization: `${url}/wp-admin/authorize-application.php` } },
        },
      }),
    'wp/v2/users/me': ({ res }) =>
      send(res, 200, {
        id: 1,
        slug: FAKE_USERNAME,
        username: FAKE_USERNAME,
        name: 'Admin',
        roles: ['administrator'],
        capabilities: Object.fromEntries(CAPABILITIES.map((capability) => [capability, true])),
      }),
    'wp/v2/users/me/application-passwords/introspect': ({ res }) =>
      send(res, 200, { uuid: '6f1c7b2e-0000-4000-8000-000000000001' }),
    'wp/v2/plugins': ({ res }) => send(res, 200, []),
    'wp/v2/themes': ({ res }) => send(res, 200, []),
    'sitewarden/v1/info': ({ res }) =>
      send(res, 200, {
        connector: '1.2.0',
        features: ['updates', 'plugins/update', 'themes', 'backups', 'restore'],
        wordpress: '6.8.1',
        php: '8.3.0',
        multisite: false,
        filesystem: 'direct',
        capabilities: {},
      }),
    'sitewarden/v1/updates': ({ res }) => send(res, 200, { checkedAt: null, plugins: {}, themes: {} }),
    'sitewarden/v1/backup/files': ({ res, json }) => {
      const body = json as { cursor?: string; limit?: number };
      send(res, 200, listing({ cursor: body.cursor ?? '', limit: body.limit ?? 1000 }));
    },
    'sitewarden/v1/backup/bundle': ({ res, json }) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      for (const path of (json as { paths: string[] }).paths) {
        const file = files.get(path);
        if (!file) res.write('-1\n');
        else if (file.served === 'html') res.write(HTML_ERROR);
        else res.write(Buffer.concat([Buffer.from(`${served(file).length}\n`), served(file)]));
      }
      res.end();
    },
    'sitewarden/v1/backup/file': ({ res, query }) => {
      const file = files.get(query.get('path') ?? '');
      if (!file)
        return send(res, 404, {
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
    'sitewarden/v1/backup/tables': ({ res }) =>
      send(res, 200, { tables: tables.map(({ sql: _sql, ...table }) => table) }),
    'sitewarden/v1/backup/rows': ({ res, query }) => {
      const table = tables.find((candidate) => candidate.name === query.get('table'));
      if (!table)
        return send(res, 404, { code: 'sitewarden_table_not_found', message: 'No such table.', data: { status: 404 } });
      send(res, 200, { sql: table.sql, rows: table.rows, next: null });
    },
  };

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const address = new URL(req.url ?? '/', url);
    if (!address.pathname.startsWith('/wp-json')) {
      res.writeHead(200, { 'content-type': 'text/html', link: `<${url}/wp-json/>; rel="https://api.w.org/"` });
      return res.end('<!DOCTYPE html><html><body>Misbehaving site</body></html>');
    }
    const route = address.pathname.replace(/^\/wp-json\/?/, '').replace(/\/+$/, '');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const request: FakeRequest = {
      method: req.method ?? 'GET',
      route,
      query: address.searchParams,
      json: raw && String(req.headers['content-type']).includes('json') ? JSON.parse(raw) : undefined,
      req,
      res,
    };
    requests.push(route);
    if (
      route !== '' &&
      req.headers.authorization !==
        `Basic ${Buffer.from(`${FAKE_USERNAME}:${FAKE_APPLICATION_PASSWORD}`).toString('base64')}`
    ) {
      return send(res, 401, {
        code: 'rest_not_logged_in',
        message: 'You are not currently logged in.',
        data: { status: 401 },
      });
    }
    if (misbehaviour.stall?.includes(route)) {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      return res.write('x'); // …and nothing more.
    }
    const override = overrides.get(route);
    if (override && (await override(request))) return;
    const answer = routes[route];
    if (!answer)
      return send(res, 404, {
        code: 'rest_no_route',
        message: 'No route was found matching the URL and request method.',
        data: { status: 404 },
      });
    answer(request);
  }

  const server = await startFakeSite((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) send(res, 500, { code: 'fake_site_error', message: String(error) });
      else res.destroy();
    });
  });
  url = server.url;

  return {
    url,
    username: FAKE_USERNAME,
    applicationPassword: FAKE_APPLICATION_PASSWORD,
    files,
    tables,
    setFile,
    /** Switched on and off by tests; read on every request. */
    misbehaviour,
    /** Replaces (or, returning false, watches) one route: e.g. `override('sitewarden/v1/backup/rows', …)`. */
    override: (route: string, handler: RouteOverride) => overrides.set(route, handler),
    /** Every route asked, in order. */
    requests,
    close: () => server.close(),
  };
}

export type MisbehavingSite = Awaited<ReturnType<typeof startMisbehavingSite>>;
