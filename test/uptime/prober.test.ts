import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProber, type ProbeSettings } from '../../src/uptime/prober.js';
import { loopbackNetwork } from '../support/network.js';

/** The prober alone against a loopback server whose paths choose the answer. */
describe('the uptime prober', () => {
  let server: Server;
  let base: string;
  const prober = createProber({ network: loopbackNetwork, maxBodyBytes: 4096, userAgent: 'test' });
  const settings = (path: string, extra: Partial<ProbeSettings> = {}): ProbeSettings => ({
    url: `${base}${path}`,
    timeoutMs: 1000,
    expectedStatus: null,
    keyword: null,
    keywordMode: 'present',
    ...extra,
  });

  beforeAll(async () => {
    server = createServer((req, res) => {
      const path = req.url ?? '/';
      if (path === '/ok') return res.end('Hello, world');
      if (path.startsWith('/redirect/')) {
        const left = Number(path.split('/')[2]);
        res.writeHead(302, { location: left > 0 ? `/redirect/${left - 1}` : '/ok' });
        return res.end();
      }
      if (path === '/loop') return res.writeHead(301, { location: '/loop' }).end();
      if (path === '/chunked-big') {
        res.writeHead(200, { 'content-type': 'text/html' });
        for (let i = 0; i < 10; i++) res.write('x'.repeat(1000));
        return res.end();
      }
      if (path === '/cut') {
        res.writeHead(200, { 'content-length': '1000' });
        res.write('partial');
        return setTimeout(() => res.socket?.destroy(), 20);
      }
      if (path === '/garbage') return req.socket.end('NOT HTTP AT ALL\r\n\r\n');
      if (path === '/slow-body') {
        res.writeHead(200, { 'content-length': '10' });
        res.write('12345');
        return; // never finishes
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await prober.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('follows redirects to the final answer and keeps its status', async () => {
    expect(await prober.probe(settings('/redirect/3', { keyword: 'Hello' }))).toMatchObject({
      up: true,
      httpStatus: 200,
      cause: null,
    });
  });

  it('gives up on a redirect loop', async () => {
    expect(await prober.probe(settings('/loop'))).toMatchObject({ up: false, httpStatus: 301, cause: 'redirects' });
  });

  it('stops reading a body without a length once it passes the cap', async () => {
    expect(await prober.probe(settings('/chunked-big'))).toMatchObject({
      up: false,
      httpStatus: 200,
      cause: 'body_too_large',
    });
  });

  it('treats a connection cut in the middle of the body as a connection failure', async () => {
    expect(await prober.probe(settings('/cut'))).toMatchObject({
      up: false,
      httpStatus: 200,
      cause: 'connect',
      responseMs: null,
    });
  });

  it('reports an answer that is not HTTP as a protocol failure', async () => {
    expect(await prober.probe(settings('/garbage'))).toMatchObject({ up: false, cause: 'protocol' });
  });

  it('times out a body that never ends, at the probe’s time limit', async () => {
    const started = performance.now();
    expect(await prober.probe(settings('/slow-body', { timeoutMs: 300 }))).toMatchObject({
      up: false,
      httpStatus: 200,
      cause: 'timeout',
    });
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('accepts only the expected statuses when they are given', async () => {
    expect(await prober.probe(settings('/missing', { expectedStatus: [404] }))).toMatchObject({
      up: true,
      httpStatus: 404,
    });
    expect(await prober.probe(settings('/ok', { expectedStatus: [204] }))).toMatchObject({
      up: false,
      httpStatus: 200,
      cause: 'http_status',
    });
  });

  it('refuses a URL that is not http or https', async () => {
    expect(await prober.probe(settings('', { url: 'ftp://127.0.0.1/' }))).toMatchObject({
      up: false,
      cause: 'protocol',
    });
  });
});
