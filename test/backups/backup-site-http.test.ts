import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAppError } from '../../src/shared/errors.js';
import { createSiteHttp } from '../../src/wordpress/site-http.js';
import { startFakeSite } from '../support/fake-wordpress/index.js';
import { loopbackNetwork } from '../support/network.js';

/** The streaming download backups use: bounded in size and time, like every call to a site. */
describe('site http streams', () => {
  const http = createSiteHttp({ network: loopbackNetwork, timeoutMs: 500, maxBytes: 1024, userAgent: 'test' });
  let site: Awaited<ReturnType<typeof startFakeSite>>;
  beforeAll(async () => {
    site = await startFakeSite((req, res) => {
      if (req.url === '/bytes') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.end(Buffer.alloc(3000, 7));
      } else if (req.url === '/stall') {
        res.writeHead(200);
        res.write('start');
      } else {
        res.writeHead(200);
        res.end(req.headers.authorization ?? 'none');
      }
    });
  });
  afterAll(async () => {
    await http.close();
    await site.close();
  });

  const read = async (body: AsyncIterable<unknown>) => {
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };
  const problemOf = async (promise: Promise<unknown>) => {
    try {
      await promise;
    } catch (error) {
      return isAppError(error) ? error.problem.name : String(error);
    }
    return 'no error';
  };

  it('streams the body with the credentials', async () => {
    const response = await http.stream({ url: `${site.url}/auth`, basicAuth: { username: 'u', password: 'p' } });
    expect(response.status).toBe(200);
    expect((await read(response.body)).toString()).toBe(`Basic ${Buffer.from('u:p').toString('base64')}`);
    expect((await read((await http.stream({ url: `${site.url}/bytes`, maxBytes: 3000 })).body)).length).toBe(3000);
  });

  it('fails a body larger than the limit, and one that stalls past the time limit', async () => {
    expect(await problemOf(read((await http.stream({ url: `${site.url}/bytes` })).body))).toBe(
      'site-response-too-large',
    );
    expect(await problemOf(read((await http.stream({ url: `${site.url}/stall`, timeoutMs: 300 })).body))).toBe(
      'site-timeout',
    );
    expect(await problemOf(http.stream({ url: 'http://127.0.0.1:1/' }))).toBe('site-unreachable');
  });
});
