import type { IncomingMessage, ServerResponse } from 'node:http';
import { startFakeSite } from './fake-site.js';

/** What the fake answers on `METHOD route` (route without `/wp-json/` and query; `index` for the REST index): JSON, or a handler of its own. */
export type FakeAnswer = unknown | ((req: IncomingMessage, res: ServerResponse) => void);

const FAKE_PASSWORD_UUID = '6f4b1b4e-5d7e-4c1a-9a57-3d2f0c6b8e21';
const ALL_CAPABILITIES = Object.fromEntries(
  [
    'activate_plugins',
    'install_plugins',
    'update_plugins',
    'delete_plugins',
    'switch_themes',
    'update_themes',
    'delete_themes',
  ].map((name) => [name, true]),
);

export const fakePlugin = (slug: string, status = 'inactive') => ({
  plugin: `${slug}/${slug}`,
  status,
  name: slug,
  version: '1.0.0',
});
const fakeTheme = (stylesheet: string, status = 'inactive') => ({
  stylesheet,
  template: stylesheet,
  status,
  name: { raw: stylesheet },
  version: '1.0.0',
});

/**
 * A stand-in WordPress with the connector, on loopback, answering every route Sitewarden reads
 * outside backups with a well-formed answer. `answers` changes any of them while it runs, so a
 * test connects with good answers and then makes one route misbehave.
 */
export async function startFakeWordPress(initial: Record<string, FakeAnswer> = {}) {
  const answers: Record<string, FakeAnswer> = {
    'GET wp/v2/users/me': {
      id: 1,
      slug: 'admin',
      username: 'admin',
      name: 'Admin',
      roles: ['administrator'],
      capabilities: ALL_CAPABILITIES,
    },
    'GET wp/v2/users/me/application-passwords/introspect': { uuid: FAKE_PASSWORD_UUID, name: 'Sitewarden' },
    [`DELETE wp/v2/users/me/application-passwords/${FAKE_PASSWORD_UUID}`]: { deleted: true },
    'GET wp/v2/plugins': [fakePlugin('akismet', 'active'), fakePlugin('hello-dolly')],
    'POST wp/v2/plugins': fakePlugin('classic-editor'),
    'POST wp/v2/plugins/akismet/akismet': fakePlugin('akismet', 'inactive'),
    'POST wp/v2/plugins/hello-dolly/hello-dolly': fakePlugin('hello-dolly', 'active'),
    'DELETE wp/v2/plugins/hello-dolly/hello-dolly': { deleted: true, previous: fakePlugin('hello-dolly') },
    'GET wp/v2/themes': [fakeTheme('twentytwentyfour', 'active'), fakeTheme('twentytwentythree')],
    'GET sitewarden/v1/info': {
      connector: '1.2.0',
      features: ['updates', 'plugins/update', 'themes', 'backups', 'restore'],
      wordpress: '6.6',
      php: '8.3',
      multisite: false,
      filesystem: 'direct',
      capabilities: {},
    },
    'GET sitewarden/v1/updates': {
      checkedAt: new Date().toISOString(),
      plugins: { 'akismet/akismet.php': { slug: 'akismet', version: '1.0.0', newVersion: '1.1.0' } },
      themes: { twentytwentythree: { version: '1.0.0', newVersion: '1.1.0' } },
    },
    'POST sitewarden/v1/plugins/update': {
      plugin: 'akismet/akismet.php',
      previousVersion: '1.0.0',
      version: '1.1.0',
      active: true,
    },
    'POST sitewarden/v1/themes/update': {
      stylesheet: 'twentytwentythree',
      previousVersion: '1.0.0',
      version: '1.1.0',
      active: false,
    },
    'POST sitewarden/v1/themes/activate': {
      stylesheet: 'twentytwentythree',
      active: true,
      previous: 'twentytwentyfour',
    },
    'POST sitewarden/v1/themes/delete': { stylesheet: 'twentytwentythree', deleted: true },
    ...initial,
  };
  const site = await startFakeSite((req, res) => {
    const host = `http://${req.headers.host}`;
    const path = new URL(req.url ?? '/', host).pathname;
    if (path === '/wp-json/' || path === '/wp-json') {
      const index = answers.index ?? {
        name: 'Fake',
        home: host,
        url: host,
        namespaces: ['wp/v2', 'sitewarden/v1'],
        authentication: {
          'application-passwords': { endpoints: { authorization: `${host}/wp-admin/authorize-application.php` } },
        },
      };
      return answer(index, req, res);
    }
    if (path.startsWith('/wp-json/')) {
      const key = `${req.method} ${decodeURIComponent(path.slice('/wp-json/'.length))}`;
      if (key in answers) return answer(answers[key], req, res);
      return json(res, 404, {
        code: 'rest_no_route',
        message: 'No route was found matching the URL and request method.',
        data: { status: 404 },
      });
    }
    res
      .writeHead(200, { 'content-type': 'text/html', link: `<${host}/wp-json/>; rel="https://api.w.org/"` })
      .end('<html></html>');
  });
  return { ...site, answers };
}

function answer(value: FakeAnswer, req: IncomingMessage, res: ServerResponse): void {
  if (typeof value === 'function') return (value as (req: IncomingMessage, res: ServerResponse) => void)(req, res);
  // Drain the request first so the daemon never sees a reset while it still writes.
  req.resume();
  req.on('end', () => json(res, 200, value));
}

const json = (res: ServerResponse, status: number, body: unknown) =>
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
