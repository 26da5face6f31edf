import { createBackupSource, sendJson, type FakeRequest } from './backup-routes.js';
import { coreAnswers, FAKE_APPLICATION_PASSWORD, FAKE_USERNAME, restIndex } from './core-answers.js';
import { startFakeSite, type SiteTls } from './loopback-server.js';

export { fakePlugin } from './core-answers.js';
export { sha256 } from './backup-routes.js';
export { startFakeSite } from './loopback-server.js';

/** What the fake answers on `METHOD route` (route without `/wp-json/` and query; `index` for the REST index): JSON, or a handler of its own. */
type FakeAnswer = unknown | ((request: FakeRequest) => void);

/** Answers a route in place of the fake's own answer; return false to let that one answer (and just watch). */
type RouteOverride = (request: FakeRequest) => boolean | Promise<boolean>;

const BASIC_CREDENTIALS = `Basic ${Buffer.from(`${FAKE_USERNAME}:${FAKE_APPLICATION_PASSWORD}`).toString('base64')}`;

/**
 * A WordPress with the Sitewarden connector on loopback, from memory: the REST index, users/me as an
 * administrator behind an application password, plugins, themes, the connector's info, updates,
 * plugin and theme actions, and the backup routes over a small honest site. Tests switch it into
 * each way a broken or hostile site behaves while it runs:
 * - `answers['METHOD route']`: any answer replaced (JSON of the wrong shape), or deleted (the route is gone);
 * - `files` (per-file `declared`/`served`), `tables`, `misbehaviour` (listing, oversized ranges, stalls);
 * - `override(route, handler)`: one route answered (or watched) by the test.
 * A site that is not WordPress at all is `startFakeSite(handler)`, the bare loopback server underneath.
 */
export async function startFakeWordPress(
  options: { answers?: Record<string, FakeAnswer>; files?: Record<string, Buffer | string>; tls?: SiteTls } = {},
) {
  const backup = createBackupSource(options.files);
  const answers: Record<string, FakeAnswer> = { ...coreAnswers(), ...backup.answers, ...options.answers };
  const overrides = new Map<string, RouteOverride>();
  const requests: string[] = [];
  let url = '';

  async function handle(request: FakeRequest) {
    const { route, req, res } = request;
    if (route !== '' && req.headers.authorization !== BASIC_CREDENTIALS) {
      return sendJson(res, 401, {
        code: 'rest_not_logged_in',
        message: 'You are not currently logged in.',
        data: { status: 401 },
      });
    }
    if (backup.misbehaviour.stall?.includes(route)) {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      return res.write('x'); // …and nothing more.
    }
    const override = overrides.get(route);
    if (override && (await override(request))) return;
    const key = route === '' ? 'index' : `${request.method} ${route}`;
    if (!(key in answers))
      return sendJson(res, 404, {
        code: 'rest_no_route',
        message: 'No route was found matching the URL and request method.',
        data: { status: 404 },
      });
    const answer = answers[key];
    if (typeof answer === 'function') return (answer as (request: FakeRequest) => void)(request);
    sendJson(res, 200, answer);
  }

  const server = await startFakeSite(
    async (req, res) => {
      // A path such as `//…` (a fuzzed site address) is no URL on this base: answered as a server would, not thrown.
      const address = URL.parse(req.url ?? '/', url);
      if (!address) {
        res.writeHead(404, { 'content-type': 'text/plain' });
        return res.end('not found');
      }
      if (!address.pathname.startsWith('/wp-json')) {
        res.writeHead(200, { 'content-type': 'text/html', link: `<${url}/wp-json/>; rel="https://api.w.org/"` });
        return res.end('<!DOCTYPE html><html><body>Fake WordPress</body></html>');
      }
      try {
        // The whole body is read first, so the daemon never sees a reset while it still writes.
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        const raw = Buffer.concat(chunks).toString('utf8');
        const json = raw && String(req.headers['content-type']).includes('json') ? JSON.parse(raw) : undefined;
        const route = decodeURIComponent(address.pathname.replace(/^\/wp-json\/?/, '').replace(/\/+$/, ''));
        requests.push(route);
        await handle({ method: req.method ?? 'GET', route, query: address.searchParams, json, req, res });
      } catch (error) {
        if (!res.headersSent) sendJson(res, 500, { code: 'fake_site_error', message: String(error) });
        else res.destroy();
      }
    },
    { tls: options.tls },
  );
  url = server.url;
  answers.index ??= restIndex(url);

  return {
    url,
    username: FAKE_USERNAME,
    applicationPassword: FAKE_APPLICATION_PASSWORD,
    /** Read on every request: change or delete an answer while the site runs. */
    answers,
    files: backup.files,
    tables: backup.tables,
    setFile: backup.setFile,
    /** Switched on and off by tests; read on every request. */
    misbehaviour: backup.misbehaviour,
    /** Replaces (or, returning false, watches) one route: e.g. `override('sitewarden/v1/backup/rows', …)`. */
    override: (route: string, handler: RouteOverride) => overrides.set(route, handler),
    /** Every REST route asked, in order (`''` for the index). */
    requests,
    close: server.close,
  };
}

export type FakeWordPress = Awaited<ReturnType<typeof startFakeWordPress>>;
