import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeSite } from '../support/fake-wordpress/index.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/**
 * A stand-in WordPress whose REST index looks right but whose authenticated answers misbehave,
 * the way broken plugins, proxies and overloaded hosts make real sites misbehave.
 */
async function misbehavingWordPress(usersMe: (req: IncomingMessage, res: ServerResponse) => void) {
  return startFakeSite((req, res) => {
    const host = `http://${req.headers.host}`;
    if (req.url === '/wp-json/') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          name: 'Broken',
          home: host,
          namespaces: ['wp/v2'],
          authentication: {
            'application-passwords': { endpoints: { authorization: `${host}/wp-admin/authorize-application.php` } },
          },
        }),
      );
      return;
    }
    if (req.url?.startsWith('/wp-json/wp/v2/users/me')) return usersMe(req, res);
    res
      .writeHead(200, { 'content-type': 'text/html', link: `<${host}/wp-json/>; rel="https://api.w.org/"` })
      .end('<html></html>');
  });
}

let t: TestApp;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
  await t?.close();
});

async function connectTo(usersMe: (req: IncomingMessage, res: ServerResponse) => void, config = {}) {
  const site = await misbehavingWordPress(usersMe);
  closers.push(site.close);
  t = createTestApp({ config });
  return t.call('POST', '/api/sites', {
    json: { url: site.url, username: 'admin', applicationPassword: 'abcd efgh ijkl mnop qrst uvwx' },
  });
}

describe('sites that misbehave', () => {
  it('turns a WordPress error 500 into a site-error problem with its code', async () => {
    const response = await connectTo((_req, res) =>
      res.writeHead(500, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          code: 'internal_server_error',
          message:
            '<p>There has been a critical error on this website.</p><p><a href="/troubleshooting/">Learn more about troubleshooting WordPress.</a></p>',
          data: { status: 500 },
        }),
      ),
    );
    expect(response.status).toBe(502);
    expect(response.json).toMatchObject({
      type: '/problems/site-error',
      siteStatus: 500,
      siteCode: 'internal_server_error',
    });
    expect(response.json.detail).toContain(
      'There has been a critical error on this website. Learn more about troubleshooting WordPress.',
    );
    expect(response.json.detail).not.toContain('<p>');
  });

  it('explains HTML where JSON should be', async () => {
    const response = await connectTo((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Under maintenance</body></html>'),
    );
    expect(response.status).toBe(502);
    expect(response.json.type).toBe('/problems/site-invalid-response');
  });

  it('refuses huge answers without reading them whole', async () => {
    const response = await connectTo(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(64 * 1024, ' ');
        let sent = 0;
        const pump = () => {
          while (sent < 64 && res.write(chunk)) sent++;
          if (sent < 64) res.once('drain', pump);
          else res.end();
        };
        pump();
      },
      { siteMaxResponseBytes: 256 * 1024 },
    );
    expect(response.status).toBe(502);
    expect(response.json.type).toBe('/problems/site-response-too-large');
  });

  it('gives up on a site that hangs, and the API keeps answering meanwhile', async () => {
    const pending = connectTo(() => undefined, { siteRequestTimeoutMs: 500 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await t.call('GET', '/api/sites')).status).toBe(200);
    const response = await pending;
    expect(response.status).toBe(504);
    expect(response.json.type).toBe('/problems/site-timeout');
  });
});
