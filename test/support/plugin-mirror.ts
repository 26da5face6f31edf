import { createReadStream } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDirectoryResponses } from './plugin-directory/api-responses.js';
import { buildCatalog, type Catalog, type ForkedPackage } from './plugin-directory/catalog.js';
import { createCoreReleases } from './plugin-directory/core-releases.js';
import { buildLanguagePacks } from './plugin-directory/language-packs.js';

export interface PluginMirror {
  /** 'http://127.0.0.1:PORT', no trailing slash. */
  url: string;
  catalog: Catalog;
  close(): Promise<void>;
}

/**
 * A loopback stand-in for api.wordpress.org and downloads.wordpress.org.
 * Paths are the real ones (plugins/info/1.2/, plugins/update-check/1.1/, ...)
 * so the test mu-plugin forwards a request by swapping only scheme and host.
 * Downloads are served at /plugin/<slug>.<version>.zip and /theme/<slug>.<version>.zip,
 * core packages at /core/wordpress-<version>.zip, language packs at
 * /translation/<type>/<slug>/<version>/<locale>.zip.
 */
export async function startPluginMirror(deps: {
  fixturesDir: string;
  zipDir: string;
  forks: ForkedPackage[];
}): Promise<PluginMirror> {
  const catalog = await buildCatalog(deps);
  const coreReleases = createCoreReleases({ zipDir: deps.zipDir });
  const languagePacks = await buildLanguagePacks(deps.zipDir);

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => sendJson(res, 500, { error: String(error) }));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://mirror');
    const path = url.pathname.replace(/\/+$/, '');

    const info = /^\/(plugin|theme)s\/info\/1\.[0-2]$/.exec(path);
    if (info) {
      const { status, body } = api.info(
        info[1] as 'plugin' | 'theme',
        url.searchParams.get('action') ?? '',
        url.searchParams,
      );
      return sendJson(res, status, body);
    }
    if (path === '/plugins/update-check/1.1') return sendJson(res, 200, api.pluginUpdates(await readForm(req)));
    if (path === '/themes/update-check/1.1') return sendJson(res, 200, api.themeUpdates(await readForm(req)));
    if (path === '/core/version-check/1.7') return sendJson(res, 200, api.coreVersionCheck(url.searchParams));

    const corePackage = /^\/core\/wordpress-(\d+(?:\.\d+)+)\.zip$/.exec(path);
    if (corePackage) {
      const zipPath = await coreReleases.packagePath(corePackage[1]!);
      if (!zipPath) return sendJson(res, 404, { error: 'Not found' });
      res.writeHead(200, { 'content-type': 'application/zip' });
      createReadStream(zipPath).pipe(res);
      return;
    }

    const translation = /^\/translation\/(plugin)\/([a-z0-9-]+)\/([\d.]+)\/([a-zA-Z_]+)\.zip$/.exec(path);
    if (translation) {
      const [, type, slug, version, language] = translation;
      const pack = languagePacks.find(
        (p) => p.type === type && p.slug === slug && p.version === version && p.language === language,
      );
      if (!pack) return sendJson(res, 404, { error: 'Not found' });
      res.writeHead(200, { 'content-type': 'application/zip' });
      createReadStream(pack.zipPath).pipe(res);
      return;
    }

    const download = /^\/(plugin|theme)\/([a-z0-9-]+)\.(\d[\w.-]*)\.zip$/.exec(path);
    if (download) {
      const [, type, slug, version] = download;
      const pkg = catalog[type as 'plugin' | 'theme'].get(slug!)?.find((p) => p.version === version);
      if (!pkg) return sendJson(res, 404, { error: 'Not found' });
      res.writeHead(200, { 'content-type': 'application/zip' });
      createReadStream(pkg.zipPath).pipe(res);
      return;
    }
    sendJson(res, 404, { error: `No mirror endpoint for ${req.method} ${url.pathname}` });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Download links need the port, known only now; no request can arrive before this line runs.
  const api = createDirectoryResponses({ catalog, coreReleases, languagePacks, baseUrl: url });

  return {
    url,
    catalog,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** WordPress posts update checks as application/x-www-form-urlencoded. */
async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}
