import { afterEach, describe, expect, it } from 'vitest';
import { createNetworkPolicy, LOOPBACK_NETWORKS, type Resolver } from '../../src/shared/network-policy.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { signIn } from '../dashboard/signed-in.js';

/**
 * A webhook's URL is checked against the network boundary when it is created or changed, not only
 * at each delivery: an IP address (or `localhost`) the daemon does not connect to is refused at
 * once (422 address-not-allowed). A host name is not looked up here (it is checked when each
 * delivery connects), so these tests never resolve or connect to anything.
 */
let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** A resolver that fails the test if anything asks it: creation must not look names up. */
const lookups: string[] = [];
const noLookups: Resolver = (hostname, callback) => {
  lookups.push(hostname);
  callback(Object.assign(new Error('no lookups in this test'), { code: 'ENOTFOUND' }), []);
};

function app(allowed: readonly string[] = []) {
  lookups.length = 0;
  t = createTestApp({ network: createNetworkPolicy({ allowed, resolver: noLookups }) });
  return t;
}

const create = (url: string) => t!.call('POST', '/api/webhooks', { json: { url, events: ['*'] } });

describe('a webhook URL at a refused address', () => {
  it.each([
    ['http://169.254.169.254/latest/meta-data/', 'metadata', '169.254.169.254'],
    ['http://[fd00:ec2::254]/', 'metadata', 'fd00:ec2::254'],
    ['http://169.254.10.20:8080/hook', 'link-local', '169.254.10.20'],
    ['http://[fe80::1]/', 'link-local', 'fe80::1'],
    ['http://0.0.0.0:9000/', 'unspecified', '0.0.0.0'],
    ['http://[::]/', 'unspecified', '::'],
    ['http://224.0.0.1/', 'multicast', '224.0.0.1'],
    ['https://10.0.0.5/hook', 'private', '10.0.0.5'],
    ['http://192.168.1.20/', 'private', '192.168.1.20'],
    ['http://[::ffff:10.0.0.5]/', 'private', '10.0.0.5'],
    ['http://127.0.0.1:8080/', 'loopback', '127.0.0.1'],
    // WHATWG URL parsing makes these 127.0.0.1 before anything checks them.
    ['http://2130706433/', 'loopback', '127.0.0.1'],
    ['http://0x7f.1/', 'loopback', '127.0.0.1'],
    ['http://localhost:8080/', 'loopback', '127.0.0.1'],
    ['http://hooks.localhost/', 'loopback', '127.0.0.1'],
  ])('refuses %s at creation (%s)', async (url, addressClass, address) => {
    app();
    const refused = await create(url);
    expect(refused.status, refused.text).toBe(422);
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
    expect(refused.json).toMatchObject({ type: '/problems/address-not-allowed', field: 'url', addressClass, address });
    expect((await t!.call('GET', '/api/webhooks')).json.items).toEqual([]);
    expect(lookups).toEqual([]);
  });

  it('refuses a change to such a URL, and the webhook keeps its old one', async () => {
    app();
    const created = await create('https://hooks.example.com/sitewarden');
    expect(created.status, created.text).toBe(201);
    const changed = await t!.call('PATCH', `/api/webhooks/${created.json.id}`, {
      json: { url: 'http://169.254.169.254/' },
    });
    expect(changed.status).toBe(422);
    expect(changed.json).toMatchObject({ type: '/problems/address-not-allowed', addressClass: 'metadata' });
    expect((await t!.call('GET', `/api/webhooks/${created.json.id}`)).json.url).toBe(
      'https://hooks.example.com/sitewarden',
    );
  });

  it('accepts a host name without looking it up (the delivery checks it when it connects), and public addresses', async () => {
    app();
    for (const url of ['https://hooks.example.com/x', 'http://internal.corp/x', 'https://93.184.215.14/x'])
      expect((await create(url)).status, url).toBe(201);
    expect(lookups).toEqual([]);
  });

  it('accepts what SITEWARDEN_ALLOWED_NETWORKS allows', async () => {
    app([...LOOPBACK_NETWORKS, '10.20.0.0/16', 'hooks.lan']);
    for (const url of ['http://127.0.0.1:9/', 'http://localhost:9/', 'http://[::1]:9/', 'http://10.20.3.4/'])
      expect((await create(url)).status, url).toBe(201);
    // A CIDR allows what it names, nothing else; a listed name never allows the metadata address.
    expect((await create('http://10.21.0.1/')).status).toBe(422);
    expect((await create('http://169.254.169.254/')).status).toBe(422);
  });

  it('refuses it in the dashboard too, saying why', async () => {
    app();
    const owner = await signIn(t!, 'alice');
    const response = await owner.post('/settings/webhooks', { url: 'http://169.254.169.254/', events: '*' });
    const page = await owner.follow(response);
    expect(page).toMatch(/169\.254\.169\.254: a metadata address/);
    expect((await t!.call('GET', '/api/webhooks')).json.items).toEqual([]);
  });
});
