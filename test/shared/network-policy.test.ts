import type { LookupAddress } from 'node:dns';
import { createServer, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuditRequest } from '../../src/performance/audit-protocol.js';
import type { AuditRunner } from '../../src/performance/audit-runner.js';
import { chromeFlags } from '../../src/performance/chrome-flags.js';
import { DEFAULT_PERFORMANCE_CONFIG } from '../../src/performance/performance.config.js';
import { reportStoreIn } from '../../src/performance/performance.reports.js';
import { createPerformanceRepository } from '../../src/performance/performance.repository.js';
import { createPerformanceService } from '../../src/performance/performance.service.js';
import { insertConnectedSite } from '../support/test-app.js';
import {
  AddressNotAllowed,
  classifyAddress,
  createNetworkPolicy,
  LOOPBACK_NETWORKS,
  parseAllowedNetworks,
  type Resolver,
} from '../../src/shared/network-policy.js';
import { isAppError } from '../../src/shared/errors.js';
import { createProber } from '../../src/uptime/prober.js';
import { createWebhookSender } from '../../src/webhooks/webhook-sender.js';
import { createSiteHttp } from '../../src/wordpress/site-http.js';
import { installNetworkTripwire, type NetworkTripwire } from '../support/network-tripwire.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { jobRunnerOf } from '../support/job-runner-fixture.js';

/**
 * The network boundary. Nothing here ever leaves loopback: made-up names get their answers from a stub resolver,
 * the tripwire fails any socket or lookup beyond loopback, and a spy counts every socket connect, so a refusal is
 * seen to come before any connection.
 */

/** A resolver that answers from a table, and says which names it was asked for. */
function stubResolver(answers: Record<string, string | string[]>): Resolver & { asked: string[] } {
  const asked: string[] = [];
  const resolver = ((hostname, callback) => {
    asked.push(hostname);
    const answer = answers[hostname];
    if (answer === undefined)
      return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
    const addresses: LookupAddress[] = (Array.isArray(answer) ? answer : [answer]).map((address) => ({
      address,
      family: net.isIPv6(address) ? 6 : 4,
    }));
    callback(null, addresses);
  }) as Resolver & { asked: string[] };
  resolver.asked = asked;
  return resolver;
}

const FORBIDDEN: Record<string, string> = {
  'metadata.test': '169.254.169.254',
  'private.test': '10.0.0.5',
  'linklocal6.test': 'fe80::1',
  'unspecified.test': '0.0.0.0',
  'multicast.test': '224.0.0.1',
  'cgnat.test': '100.64.0.1',
  'ula.test': 'fd00::5',
  'mapped.test': '::ffff:169.254.169.254',
  'loopback.test': '127.0.0.1',
};

let tripwire: NetworkTripwire;
let connects: string[];
beforeEach(() => {
  tripwire = installNetworkTripwire();
  connects = [];
  const connect = net.Socket.prototype.connect;
  vi.spyOn(net.Socket.prototype, 'connect').mockImplementation(function (this: net.Socket, ...args: unknown[]) {
    const first = (Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0]) as { host?: string; port?: number };
    connects.push(`${first?.host}:${first?.port}`);
    return (connect as (...args: unknown[]) => net.Socket).apply(this, args);
  } as typeof net.Socket.prototype.connect);
});
afterEach(() => {
  vi.restoreAllMocks();
  tripwire.uninstall();
  expect(tripwire.violations).toEqual([]);
});

/** A loopback server answering `/` with "ok", `/to?url` with a 302 to that url. */
let server: Server;
let port: number;
beforeAll(async () => {
  server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://x');
    if (url.pathname === '/to') {
      response.writeHead(302, { location: url.search.slice(1) });
      return response.end();
    }
    response.end('ok');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((done) => server.close(() => done())));

describe('address classes', () => {
  it.each([
    ['169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    ['169.254.10.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['10.0.0.5', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['::ffff:10.0.0.5', 'private'],
    ['64:ff9b::10.0.0.5', 'private'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['8.8.8.8', 'public'],
    ['172.32.0.1', 'public'],
    ['100.128.0.1', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['::ffff:8.8.8.8', 'public'],
  ])('%s is %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });
});

describe('SITEWARDEN_ALLOWED_NETWORKS', () => {
  it('takes CIDRs, addresses, host names and *.suffixes; the default allows nothing beyond public addresses', () => {
    expect(loadConfig({}).allowedNetworks).toEqual([]);
    expect(
      loadConfig({ SITEWARDEN_ALLOWED_NETWORKS: '10.0.0.0/8, fd00::/8,192.168.1.20 ,wp.internal,*.lan' })
        .allowedNetworks,
    ).toEqual(['10.0.0.0/8', 'fd00::/8', '192.168.1.20', 'wp.internal', '*.lan']);
  });

  it.each(['10.0.0.0/33', '10.0.0.0/8/1', 'fd00::/129', 'not a host', 'http://wp.internal', '10.0.0.0/x', '10.0.0.0/'])(
    'refuses %s at start with a line naming the variable',
    (value) => {
      expect(() => loadConfig({ SITEWARDEN_ALLOWED_NETWORKS: value })).toThrow(ConfigError);
      expect(() => loadConfig({ SITEWARDEN_ALLOWED_NETWORKS: value })).toThrow(/SITEWARDEN_ALLOWED_NETWORKS/);
    },
  );

  it('a CIDR or address allows the addresses in it; a host name allows that host anywhere but at the metadata address', async () => {
    const resolver = stubResolver({
      'wp.internal': '10.1.2.3',
      'evil.internal': '169.254.169.254',
      'shop.lan': '192.168.7.7',
      'other.test': '192.168.1.21',
    });
    const policy = createNetworkPolicy({
      allowed: parseAllowedNetworks('192.168.1.20,fd00::/8,wp.internal,evil.internal,*.lan'),
      resolver,
    });
    expect(() => policy.check('192.168.1.20', '192.168.1.20')).not.toThrow();
    expect(() => policy.check('x', 'fd00::7')).not.toThrow();
    expect(() => policy.check('x', '::ffff:192.168.1.20')).not.toThrow();
    const mapped = createNetworkPolicy({ allowed: parseAllowedNetworks('::ffff:10.0.0.0/104,::ffff:192.168.1.20') });
    expect(() => mapped.check('x', '10.9.9.9')).not.toThrow();
    expect(() => mapped.check('x', '192.168.1.20')).not.toThrow();
    expect(() => mapped.check('x', '192.168.1.21')).toThrow(AddressNotAllowed);
    expect(() => policy.check('x', '192.168.1.21')).toThrow(AddressNotAllowed);
    expect(await policy.resolve('wp.internal')).toEqual([{ address: '10.1.2.3', family: 4 }]);
    expect(await policy.resolve('shop.lan')).toEqual([{ address: '192.168.7.7', family: 4 }]);
    await expect(policy.resolve('evil.internal')).rejects.toMatchObject({ addressClass: 'metadata' });
    await expect(policy.resolve('other.test')).rejects.toMatchObject({ addressClass: 'private' });
    // An explicit CIDR allows even the metadata address.
    const cloud = createNetworkPolicy({ allowed: ['169.254.169.254/32'], resolver });
    expect(await cloud.resolve('evil.internal')).toEqual([{ address: '169.254.169.254', family: 4 }]);
  });

  it('keeps only the allowed answers of a name that resolves to several addresses, and refuses when none is left', async () => {
    const policy = createNetworkPolicy({
      resolver: stubResolver({ 'mixed.test': ['10.0.0.5', '8.8.8.8'], 'inner.test': ['10.0.0.5', 'fe80::1'] }),
    });
    expect(await policy.resolve('mixed.test')).toEqual([{ address: '8.8.8.8', family: 4 }]);
    await expect(policy.resolve('inner.test')).rejects.toBeInstanceOf(AddressNotAllowed);
  });
});

describe('site calls', () => {
  const siteHttp = (resolver: Resolver, allowed: readonly string[] = LOOPBACK_NETWORKS) =>
    createSiteHttp({
      timeoutMs: 3_000,
      maxBytes: 10_000,
      userAgent: 'test',
      network: createNetworkPolicy({ allowed, resolver }),
    });

  async function problemOf(promise: Promise<unknown>): Promise<Record<string, unknown>> {
    try {
      await promise;
    } catch (error) {
      if (isAppError(error)) return { name: error.problem.name, status: error.problem.status, ...error.extensions };
      throw error;
    }
    throw new Error('the request succeeded');
  }

  it.each(Object.entries(FORBIDDEN).filter(([name]) => name !== 'loopback.test'))(
    'refuses %s (%s) with address-not-allowed before any socket connects, http and https',
    async (name, address) => {
      const http = siteHttp(stubResolver(FORBIDDEN));
      try {
        for (const scheme of ['http', 'https']) {
          const problem = await problemOf(http.request({ url: `${scheme}://${name}/wp-json/` }));
          expect(problem).toMatchObject({ name: 'address-not-allowed', status: 422, host: name });
          expect(classifyAddress(address)).toBe(problem.addressClass);
        }
        expect(connects).toEqual([]);
      } finally {
        await http.close();
      }
    },
  );

  it('refuses loopback too unless the setting allows it', async () => {
    const http = siteHttp(stubResolver(FORBIDDEN), []);
    try {
      expect(await problemOf(http.request({ url: `http://127.0.0.1:${port}/` }))).toMatchObject({
        name: 'address-not-allowed',
        addressClass: 'loopback',
      });
      expect(await problemOf(http.request({ url: `http://loopback.test:${port}/` }))).toMatchObject({
        name: 'address-not-allowed',
        addressClass: 'loopback',
      });
      expect(connects).toEqual([]);
    } finally {
      await http.close();
    }
  });

  it('refuses IP literals without asking the resolver: IPv4, IPv6, IPv4-mapped IPv6', async () => {
    const resolver = stubResolver({});
    const http = siteHttp(resolver);
    try {
      for (const [url, addressClass] of [
        ['http://169.254.169.254/latest/meta-data/', 'metadata'],
        ['http://[::ffff:a9fe:a9fe]/', 'metadata'],
        ['http://[fd00:ec2::254]/', 'metadata'],
        ['http://0x0a000005/', 'private'],
        ['http://[fe80::1]/', 'link-local'],
        ['http://0.0.0.0:8080/', 'unspecified'],
      ] as const) {
        expect(await problemOf(http.request({ url })), url).toMatchObject({
          name: 'address-not-allowed',
          addressClass,
        });
      }
      expect(resolver.asked).toEqual([]);
      expect(connects).toEqual([]);
    } finally {
      await http.close();
    }
  });

  it('checks every redirect hop: an allowed site redirecting to a forbidden address is refused at that hop', async () => {
    const http = siteHttp(stubResolver(FORBIDDEN));
    try {
      const problem = await problemOf(
        http.request({ url: `http://127.0.0.1:${port}/to?http://private.test/wp-admin/` }),
      );
      expect(problem).toMatchObject({ name: 'address-not-allowed', host: 'private.test', addressClass: 'private' });
      expect(connects).toEqual([`127.0.0.1:${port}`]);
    } finally {
      await http.close();
    }
  });

  it('connects to exactly the address it checked: no second lookup a rebinding answer could change', async () => {
    // Answers loopback once, then the metadata address: the request made after the first answer reaches the site.
    let calls = 0;
    const rebinding: Resolver = (_hostname, callback) =>
      callback(null, [{ address: calls++ === 0 ? '127.0.0.1' : '169.254.169.254', family: 4 }]);
    const http = siteHttp(rebinding);
    try {
      const answer = await http.request({ url: `http://rebind.test:${port}/` });
      expect(answer.text()).toBe('ok');
      expect(calls).toBe(1);
      expect(connects).toEqual([`rebind.test:${port}`]);
      // A new connection is checked again (the pool's idle one is closed first).
      await http.close();
      const again = siteHttp(rebinding);
      expect(await problemOf(again.request({ url: `http://rebind.test:${port}/` }))).toMatchObject({
        name: 'address-not-allowed',
        addressClass: 'metadata',
      });
      await again.close();
      expect(connects).toHaveLength(1);
    } finally {
      await http.close();
    }
  });

  it('a name that does not resolve is still site-unreachable, not a refusal', async () => {
    const http = siteHttp(stubResolver({}));
    try {
      expect(await problemOf(http.request({ url: 'http://nowhere.test/' }))).toMatchObject({
        name: 'site-unreachable',
      });
    } finally {
      await http.close();
    }
  });
});

describe('uptime probes and webhook deliveries record the refusal as their cause', () => {
  it('a probe of a forbidden address, or redirected to one, is down with cause address_not_allowed', async () => {
    const prober = createProber({
      maxBodyBytes: 4096,
      userAgent: 'test',
      network: createNetworkPolicy({ allowed: LOOPBACK_NETWORKS, resolver: stubResolver(FORBIDDEN) }),
    });
    const settings = { timeoutMs: 3_000, expectedStatus: null, keyword: null, keywordMode: 'present' as const };
    try {
      expect(await prober.probe({ ...settings, url: `http://127.0.0.1:${port}/` })).toMatchObject({ up: true });
      for (const url of [
        'http://metadata.test/',
        'https://private.test/',
        'http://[fe80::1]/',
        `http://127.0.0.1:${port}/to?http://multicast.test/`,
      ]) {
        expect(await prober.probe({ ...settings, url }), url).toMatchObject({
          up: false,
          cause: 'address_not_allowed',
        });
      }
      expect(connects).toEqual([`127.0.0.1:${port}`, `127.0.0.1:${port}`]);
    } finally {
      await prober.close();
    }
  });

  it('a delivery to a forbidden receiver fails with cause address_not_allowed and sends nothing', async () => {
    const sender = createWebhookSender({
      timeoutMs: 3_000,
      userAgent: 'test',
      network: createNetworkPolicy({ allowed: [], resolver: stubResolver(FORBIDDEN) }),
    });
    try {
      for (const url of ['http://metadata.test/hook', 'https://10.0.0.5/hook', `http://127.0.0.1:${port}/hook`]) {
        const outcome = await sender.send({ url, headers: {}, body: '{}' });
        expect(outcome, url).toMatchObject({ ok: false, status: null, cause: 'address_not_allowed' });
        expect(outcome.error).toMatch(/address, which Sitewarden does not connect to/);
      }
      expect(connects).toEqual([]);
    } finally {
      await sender.close();
    }
  });
});

describe('the API', () => {
  let t: TestApp;
  beforeEach(() => {
    t = createTestApp({
      network: createNetworkPolicy({ allowed: LOOPBACK_NETWORKS, resolver: stubResolver(FORBIDDEN) }),
    });
  });
  afterEach(() => t.close());

  it('connecting a site at a forbidden address answers 422 address-not-allowed naming the host and the class', async () => {
    for (const [url, host, addressClass] of [
      ['http://metadata.test', 'metadata.test', 'metadata'],
      ['https://private.test/blog', 'private.test', 'private'],
      ['http://169.254.169.254', '169.254.169.254', 'metadata'],
    ] as const) {
      const answer = await t.call('POST', '/api/sites', { json: { url } });
      expect(answer.status, url).toBe(422);
      expect(answer.headers.get('content-type')).toContain('application/problem+json');
      expect(answer.json).toMatchObject({ type: '/problems/address-not-allowed', status: 422, host, addressClass });
    }
    expect(connects).toEqual([]);
    expect(await t.services.sitesRepository.findByUrl('http://metadata.test')).toBeUndefined();
  });
});

describe('Chromium (audits, screenshots)', () => {
  it('is pinned to the address the daemon checked, and in block mode reaches loopback only for a loopback site', () => {
    const flags = chromeFlags({
      auditedHost: 'example.com',
      auditedAddress: '93.184.215.14',
      runningAsRoot: false,
      blockThirdParty: true,
    });
    expect(flags).toContain('--host-resolver-rules=MAP example.com 93.184.215.14, MAP * ~NOTFOUND');
    expect(flags).toContain('--proxy-bypass-list=example.com;<-loopback>');
    const v6 = chromeFlags({
      auditedHost: 'example.com',
      auditedAddress: '2606:2800::1',
      runningAsRoot: false,
      blockThirdParty: false,
    });
    expect(v6).toContain('--host-resolver-rules=MAP example.com [2606:2800::1]');
    expect(v6.some((flag) => flag.startsWith('--proxy-server'))).toBe(false);
    const loopbackSite = chromeFlags({
      auditedHost: '127.0.0.1',
      auditedAddress: null,
      runningAsRoot: false,
      blockThirdParty: true,
    });
    expect(loopbackSite).toContain(
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1, EXCLUDE ::1',
    );
    expect(loopbackSite).toContain('--proxy-bypass-list=localhost;127.0.0.1;[::1]');
  });
});

describe('performance audits', () => {
  it('resolve and check the audited host first: a refused one fails address_not_allowed without a browser, an allowed one is pinned', async () => {
    const t = createTestApp();
    const dataDir = mkdtempSync(join(tmpdir(), 'sitewarden-network-audit-'));
    const requests: AuditRequest[] = [];
    const runner: AuditRunner = {
      async run(request) {
        requests.push(request);
        return { ok: false, reason: 'page_error', message: 'scripted' };
      },
      killAll: () => undefined,
    };
    const performance = createPerformanceService({
      network: createNetworkPolicy({ allowed: LOOPBACK_NETWORKS, resolver: stubResolver(FORBIDDEN) }),
      repository: createPerformanceRepository(t.state),
      sitesRepository: t.services.sitesRepository,
      runner,
      reports: reportStoreIn(dataDir),
      clock: t.clock,
      logger: t.logs.logger,
      config: DEFAULT_PERFORMANCE_CONFIG,
      jobs: jobRunnerOf(t),
    });
    try {
      const refused = insertConnectedSite(t, { url: 'http://metadata.test' });
      const pinned = insertConnectedSite(t, { url: 'http://loopback.test:9' });
      const literal = insertConnectedSite(t, { url: 'http://[::ffff:10.0.0.5]' });
      for (const siteId of [refused, pinned, literal]) await performance.requestAudit(siteId, { formFactor: 'mobile' });
      await performance.idle();
      expect(requests.map((request) => [request.url, request.address])).toEqual([
        ['http://loopback.test:9', '127.0.0.1'],
      ]);
      for (const [siteId, addressClass] of [
        [refused, 'metadata'],
        [literal, 'private'],
      ] as const) {
        const [audit] = await performance.history(siteId, { limit: 1 });
        expect(audit).toMatchObject({ status: 'failed', failureReason: 'address_not_allowed' });
        expect(audit!.failureMessage).toContain(`a ${addressClass} address`);
      }
      expect(connects).toEqual([]);
    } finally {
      await performance.stop();
      await t.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
