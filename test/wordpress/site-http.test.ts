import { afterEach, describe, expect, it } from 'vitest';
import { isAppError } from '../../src/shared/errors.js';
import { createSiteHttp } from '../../src/wordpress/site-http.js';
import { discoverSite } from '../../src/wordpress/discovery.js';
import { startFakeSite } from '../support/fake-wordpress/index.js';
import { loopbackNetwork } from '../support/network.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function fakeSite(handler: Parameters<typeof startFakeSite>[0]) {
  const site = await startFakeSite(handler);
  closers.push(site.close);
  return site;
}

function client(options: { timeoutMs?: number; maxBytes?: number } = {}) {
  const http = createSiteHttp({
    network: loopbackNetwork,
    timeoutMs: options.timeoutMs ?? 2_000,
    maxBytes: options.maxBytes ?? 64 * 1024,
    userAgent: 'test',
  });
  closers.push(() => http.close());
  return http;
}

async function problemOf(promise: Promise<unknown>): Promise<{ name: string; status: number; detail: string }> {
  try {
    await promise;
  } catch (error) {
    if (isAppError(error)) return { name: error.problem.name, status: error.problem.status, detail: error.detail };
    throw error;
  }
  throw new Error('expected a problem');
}

describe('calls to remote sites', () => {
  it('gives up on a site that never answers at the time limit', async () => {
    const site = await fakeSite(() => {
      /* never answers */
    });
    const started = Date.now();
    const problem = await problemOf(client({ timeoutMs: 300 }).request({ url: site.url }));
    expect(problem).toMatchObject({ name: 'site-timeout', status: 504 });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('gives up on a site that starts answering and then stalls', async () => {
    const site = await fakeSite((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"partial":');
    });
    expect(await problemOf(client({ timeoutMs: 300 }).request({ url: site.url }))).toMatchObject({
      name: 'site-timeout',
    });
  });

  it('reports an answer cut short (the connection closed before the bytes it declared) as unreachable', async () => {
    const site = await fakeSite((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"partial":', () => res.socket?.destroy());
    });
    // A POST, so the one retry a GET gets does not hide the first failure.
    expect(
      await problemOf(client({ timeoutMs: 2_000 }).request({ url: site.url, method: 'POST', json: {} })),
    ).toMatchObject({ name: 'site-unreachable', status: 502 });
  });

  it('drops a body over the cap from a site that closes its connection, and the daemon lives on', async () => {
    // A body dropped half-read while the server closes the socket once took the process down
    // (undici 7's parser asserted in its socket-end handler); many rounds make the race likely.
    const chunk = Buffer.alloc(16 * 1024, 'b');
    const site = await fakeSite((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', connection: 'close' });
      for (let i = 0; i < 16; i++) res.write(chunk);
      res.end();
    });
    const http = client({ maxBytes: 20 * 1024 });
    const rounds = await Promise.all(
      Array.from({ length: 60 }, () => problemOf(http.request({ url: site.url, method: 'POST', json: {} }))),
    );
    expect(new Set(rounds.map((problem) => problem.name))).toEqual(new Set(['site-response-too-large']));
    await new Promise((resolve) => setTimeout(resolve, 200));
  });

  it('refuses bodies over the size cap, announced or not', async () => {
    const big = Buffer.alloc(200 * 1024, 'a');
    const announced = await fakeSite((_req, res) => res.end(big));
    expect(await problemOf(client().request({ url: announced.url }))).toMatchObject({
      name: 'site-response-too-large',
      status: 502,
    });
    const streamed = await fakeSite((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      for (let i = 0; i < 20; i++) res.write(Buffer.alloc(16 * 1024, 'b'));
      res.end();
    });
    expect(await problemOf(client().request({ url: streamed.url }))).toMatchObject({ name: 'site-response-too-large' });
  });

  it('explains HTML where JSON was expected', async () => {
    const site = await fakeSite((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body>Maintenance</body></html>');
    });
    const response = await client().request({ url: site.url });
    expect(await problemOf(Promise.resolve().then(() => response.json()))).toMatchObject({
      name: 'site-invalid-response',
      status: 502,
    });
  });

  it('reports a refused connection as unreachable', async () => {
    const site = await fakeSite(() => undefined);
    await site.close();
    closers.pop();
    expect(await problemOf(client().request({ url: site.url }))).toMatchObject({
      name: 'site-unreachable',
      status: 502,
    });
  });

  it('retries a GET once after a 503, and never retries a POST', async () => {
    let gets = 0;
    let posts = 0;
    const site = await fakeSite((req, res) => {
      if (req.method === 'POST') {
        posts++;
        res.writeHead(503).end();
        return;
      }
      gets++;
      res.writeHead(gets === 1 ? 503 : 200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    const http = client();
    expect((await http.request({ url: site.url })).json()).toEqual({ ok: true });
    expect(gets).toBe(2);
    expect((await http.request({ url: site.url, method: 'POST', json: {} })).status).toBe(503);
    expect(posts).toBe(1);
  });

  it('does not send credentials along a redirect to another origin', async () => {
    let seenAuthorization: string | undefined = 'unset';
    const other = await fakeSite((req, res) => {
      seenAuthorization = req.headers.authorization;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    const site = await fakeSite((_req, res) => res.writeHead(302, { location: `${other.url}/elsewhere` }).end());
    await client().request({ url: site.url, basicAuth: { username: 'u', password: 'secret' } });
    expect(seenAuthorization).toBeUndefined();
  });
});

describe('WordPress discovery', () => {
  it('says plainly when an address is not WordPress', async () => {
    const site = await fakeSite((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html>Just a page</html>'),
    );
    expect(await problemOf(discoverSite(client(), site.url))).toMatchObject({ name: 'not-wordpress', status: 422 });
  });

  it('follows the api.w.org Link header to the REST index', async () => {
    const site = await fakeSite((req, res) => {
      if (req.url === '/custom-api/') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            name: 'Blog',
            home: `http://${req.headers.host}/`,
            namespaces: ['wp/v2'],
            authentication: [],
          }),
        );
        return;
      }
      res
        .writeHead(200, {
          'content-type': 'text/html',
          link: `<http://${req.headers.host}/custom-api/>; rel="https://api.w.org/"`,
        })
        .end('<html></html>');
    });
    const discovered = await discoverSite(client(), site.url);
    expect(discovered).toMatchObject({
      restUrl: `${site.url}/custom-api/`,
      name: 'Blog',
      homeUrl: site.url,
      authorizationEndpoint: null,
    });
  });
});
