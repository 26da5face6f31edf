import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withScreenshots } from '../../src/safe-updates/screenshots.js';
import { AddressNotAllowed, createNetworkPolicy, LOOPBACK_NETWORKS } from '../../src/shared/network-policy.js';

const CHROMIUM = '/usr/bin/chromium';

/**
 * Chromium goes where the daemon's check said, by name: a made-up host the stub resolver answers with loopback is
 * reached through `--host-resolver-rules` (Chromium itself could not resolve it), and a host answered with a refused
 * address stops the screenshots before any browser starts. Nothing here leaves loopback.
 */
describe.skipIf(!existsSync(CHROMIUM))('Chromium and the network boundary', () => {
  let server: Server;
  let port: number;
  const hosts: string[] = [];
  beforeAll(async () => {
    server = createServer((request, response) => {
      hosts.push(request.headers.host ?? '');
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<!doctype html><title>pinned</title><body style="background:#0a0">pinned</body>');
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  const network = createNetworkPolicy({
    allowed: LOOPBACK_NETWORKS,
    resolver: (hostname, callback) =>
      callback(null, [{ address: hostname === 'site.test' ? '127.0.0.1' : '169.254.169.254', family: 4 }]),
  });

  it('loads the site by its name at the address checked', { timeout: 60_000 }, async () => {
    const png = await withScreenshots({ chromePath: CHROMIUM, host: 'site.test', network }, (shoot) =>
      shoot(`http://site.test:${port}/`),
    );
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect(hosts).toContain(`site.test:${port}`);
  });

  it('starts no browser for a host at a refused address', async () => {
    let shot = false;
    await expect(
      withScreenshots({ chromePath: CHROMIUM, host: 'metadata.test', network }, async () => (shot = true)),
    ).rejects.toBeInstanceOf(AddressNotAllowed);
    expect(shot).toBe(false);
  });
});
