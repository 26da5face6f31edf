import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PERFORMANCE_CONFIG } from '../../src/performance/performance.config.js';
import { createId } from '../../src/shared/ids.js';
import { startFakeWordPress } from '../support/fake-wordpress/index.js';
import { freePort } from '../support/served-app.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { installNetworkTripwire, isLoopbackHost } from '../support/network-tripwire.js';
import {
  arbitraryFor,
  junk,
  nastyString,
  type OpenApiDocument,
  type OpenApiOperation,
} from '../support/openapi-arbitraries.js';

/**
 * Every operation of the OpenAPI document, driven with generated bodies, path and query
 * parameters and headers: the API never answers 500, and every error is a problem document.
 * The daemon only ever reaches loopback here: URL fields are generated on loopback, and a
 * tripwire refuses any other connection or name lookup before it leaves the process.
 */
const tripwire = installNetworkTripwire();
const TOTAL_CASES = Number(process.env.SITEWARDEN_FUZZ_CASES ?? 5_200);

let t: TestApp;
let doc: OpenApiDocument;
let dataDir: string;
let closedPort: number;
const fixtures = { siteId: '', webhookId: '', backupId: '' };
const closers: (() => Promise<void>)[] = [];

async function ensureFixtures(siteUrl: string) {
  if ((await t.call('GET', `/api/sites/${fixtures.siteId}`)).status !== 200) {
    const existing = (await t.call('GET', '/api/sites?limit=200')).json.items.find(
      (site: { url: string; status: { connection: string } }) =>
        site.url === siteUrl && site.status.connection === 'connected',
    );
    if (existing) fixtures.siteId = existing.id;
    else {
      for (const site of (await t.call('GET', '/api/sites?limit=200')).json.items)
        if (site.url === siteUrl) await t.call('DELETE', `/api/sites/${site.id}`);
      const connected = await t.call('POST', '/api/sites', {
        json: { url: siteUrl, username: 'admin', applicationPassword: 'abcd efgh ijkl mnop qrst uvwx' },
      });
      expect(connected.status, connected.text).toBe(201);
      fixtures.siteId = connected.json.id;
    }
  }
  if ((await t.call('GET', `/api/webhooks/${fixtures.webhookId}`)).status !== 200) {
    const created = await t.call('POST', '/api/webhooks', {
      json: { url: `http://127.0.0.1:${closedPort}/hook`, events: ['*'] },
    });
    expect(created.status, created.text).toBe(201);
    fixtures.webhookId = created.json.id;
  }
  if ((await t.call('GET', `/api/sites/${fixtures.siteId}/backups/${fixtures.backupId}`)).status !== 200) {
    const started = await t.call('POST', `/api/sites/${fixtures.siteId}/backups`);
    expect(started.status, started.text).toBe(202);
    fixtures.backupId = started.json.id;
  }
}

let siteUrl = '';
beforeAll(async () => {
  const site = await startFakeWordPress();
  closers.push(site.close);
  siteUrl = site.url;
  closedPort = await freePort();
  dataDir = mkdtempSync(join(tmpdir(), 'sitewarden-fuzz-'));
  // Audits would start Chromium: with no browser to start they fail at once, still on loopback.
  t = createTestApp({
    config: {
      dataDir,
      siteRequestTimeoutMs: 3_000,
      performance: { ...DEFAULT_PERFORMANCE_CONFIG, chromePath: join(dataDir, 'no-chromium'), concurrency: 1 },
    },
  });
  doc = (await t.call('GET', '/api/openapi.json')).json as OpenApiDocument;
  await ensureFixtures(siteUrl);
});

afterAll(async () => {
  await t?.services.performance.stop();
  await t?.services.backups.stop(2_000);
  await t?.close();
  while (closers.length) await closers.pop()!();
  tripwire.uninstall();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** Only ever loopback: the fake WordPress, a closed port, and addresses that cannot be resolved at all. */
const loopbackUrl = () =>
  fc.oneof(
    fc.constantFrom(
      siteUrl,
      `${siteUrl}/`,
      `http://127.0.0.1:${closedPort}`,
      `https://127.0.0.1:${closedPort}/wp`,
      `http://[::1]:${closedPort}/`,
      `http://127.0.0.1:${closedPort}/?rest_route=/`,
    ),
    fc
      .tuple(fc.constantFrom(siteUrl, `http://127.0.0.1:${closedPort}`), fc.webPath(), fc.webQueryParameters())
      .map(([base, path, query]) => `${base}${path}${query ? `?${query}` : ''}`),
    fc.constantFrom(
      '',
      'ftp://127.0.0.1/x',
      'javascript:alert(1)',
      'http://[::1',
      'not a url',
      'http://user:pw@127.0.0.1/',
      `http://127.0.0.1:${closedPort}/${'a'.repeat(3000)}`,
    ),
  );

const idLike = (prefix: string) =>
  fc
    .date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true })
    .map((date) => createId(prefix, date));

function pathValue(path: string, name: string): fc.Arbitrary<string> {
  const pool: Record<string, () => string[]> = {
    siteId: () => [fixtures.siteId],
    id: () => (path.startsWith('/webhooks') ? [fixtures.webhookId] : [fixtures.siteId]),
    backupId: () => [fixtures.backupId],
    slug: () => ['akismet', 'hello-dolly', 'twentytwentythree', 'twentytwentyfour', 'classic-editor'],
  };
  const prefix =
    {
      siteId: 'site',
      id: path.startsWith('/webhooks') ? 'whk' : 'site',
      backupId: 'bkp',
      restoreId: 'rst',
      auditId: 'aud',
    }[name] ?? 'x';
  return fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...(pool[name]?.() ?? ['x'])) },
    { weight: 2, arbitrary: idLike(prefix) },
    { weight: 2, arbitrary: nastyString.filter((value) => value.length > 0).map(encodeSegment) },
    // Raw, as a hand-written URL would carry them: broken escapes, dots, encoded slashes, invalid UTF-8.
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '%',
        '%ZZ',
        '%E0%A4%A',
        '%ED%A0%80',
        '%FF',
        '.',
        '..',
        '%2F',
        '%2e%2e',
        'a%00b',
        '%20',
      ),
    },
  );
}

function encodeSegment(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return '%ED%A0%80'; // a lone surrogate has no UTF-8: send the bytes a careless client would
  }
}

/** Fields whose valid values a schema cannot tell (URLs must stay on loopback; event names come from the catalogue). */
function special(name: string): fc.Arbitrary<unknown> | undefined {
  if (/url/i.test(name)) return loopbackUrl();
  if (name === 'events')
    return fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(['*'], ['site.down', 'backup.failed'], ['site.up']) },
      { weight: 1, arbitrary: fc.array(nastyString, { maxLength: 3 }) },
      { weight: 1, arbitrary: junk },
    );
  return undefined;
}

/** Header values a client can really send (printable ASCII), around the ones that matter. */
const headerText = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)),
  maxLength: 80,
});
const headers = () =>
  fc.record(
    {
      authorization: fc.oneof(
        { weight: 16, arbitrary: fc.constant(`Bearer ${t.writeToken}`) },
        { weight: 1, arbitrary: fc.constant(`Bearer ${t.readToken}`) },
        {
          weight: 1,
          arbitrary: fc.constantFrom(
            '',
            'Bearer',
            'Bearer sw_nope',
            'Basic YWRtaW46YWRtaW4=',
            `bearer ${t.writeToken}`,
          ),
        },
        { weight: 1, arbitrary: headerText },
      ),
      accept: fc.constantFrom('application/json', 'text/html', '*/*', 'application/problem+json', 'image/png;q=0.1'),
      'x-forwarded-for': fc.constantFrom('127.0.0.1', '10.0.0.1, 127.0.0.1', 'garbage'),
      'if-none-match': headerText,
      range: fc.constantFrom('bytes=0-10', 'bytes=99999999-', 'bytes=-5', 'bytes=abc', 'items=1-2'),
    },
    { requiredKeys: ['authorization'] },
  );

interface GeneratedRequest {
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body?: { contentType: string; text: string };
}

function requestsFor(path: string, method: string, operation: OpenApiOperation): fc.Arbitrary<GeneratedRequest> {
  const parameters = operation.parameters ?? [];
  const pathParams = parameters.filter((parameter) => parameter.in === 'path');
  const queryParams = parameters.filter((parameter) => parameter.in === 'query');
  const stringify = (value: unknown) => (typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));
  const jsonSchema = operation.requestBody?.content['application/json']?.schema;
  const formSchema = operation.requestBody?.content['application/x-www-form-urlencoded']?.schema;
  const body: fc.Arbitrary<GeneratedRequest['body']> = operation.requestBody
    ? fc.oneof(
        {
          weight: 6,
          arbitrary: arbitraryFor(jsonSchema ?? formSchema, doc, special).map((value) => ({
            contentType: 'application/json',
            text: JSON.stringify(value) ?? 'null',
          })),
        },
        {
          weight: formSchema ? 2 : 0,
          arbitrary: arbitraryFor(formSchema, doc, special).map((value) => ({
            contentType: 'application/x-www-form-urlencoded',
            text: new URLSearchParams(
              Object.entries(typeof value === 'object' && value !== null ? value : {}).map(
                ([key, field]): [string, string] => [key, stringify(field)],
              ),
            ).toString(),
          })),
        },
        {
          weight: 1,
          arbitrary: fc
            .tuple(
              fc.constantFrom(
                'application/json',
                'text/plain',
                'multipart/form-data; boundary=x',
                'application/json; charset=latin1',
                '',
              ),
              nastyString,
            )
            .map(([contentType, text]) => ({ contentType, text })),
        },
        { weight: 1, arbitrary: fc.constant(undefined) },
      )
    : fc.oneof(
        { weight: 9, arbitrary: fc.constant(undefined) },
        {
          weight: 1,
          arbitrary: junk.map((value) => ({ contentType: 'application/json', text: JSON.stringify(value) ?? '' })),
        },
      );
  const query = fc.record(
    Object.fromEntries(
      queryParams.map((parameter) => [
        parameter.name,
        arbitraryFor(parameter.schema, doc, special, parameter.name).map(stringify),
      ]),
    ),
    { requiredKeys: [] },
  );
  const params = fc.tuple(...pathParams.map((parameter) => pathValue(path, parameter.name)));
  void method;
  return fc
    .record({ params, query, headers: headers(), body })
    .map(({ params: values, query: queryValues, headers: headerValues, body: bodyValue }) => ({
      path: pathParams.reduce((built, parameter, index) => built.replace(`{${parameter.name}}`, values[index]!), path),
      query: queryValues as Record<string, string>,
      headers: headerValues as Record<string, string>,
      body: bodyValue,
    }));
}

async function send(method: string, request: GeneratedRequest) {
  const search = new URLSearchParams(request.query).toString();
  const headers: Record<string, string> = { ...request.headers };
  // A GET cannot carry a body in a real client.
  const body = method === 'get' ? undefined : request.body;
  if (body?.contentType) headers['content-type'] = body.contentType;
  const response = await t.app.request(`/api${request.path}${search ? `?${search}` : ''}`, {
    method: method.toUpperCase(),
    headers,
    body: body?.text,
  });
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    text: await response.text(),
  };
}

describe('the whole API under generated input', () => {
  it('never answers 500, and answers every error as a problem document', { timeout: 180_000 }, async () => {
    const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({ path, method, operation })),
    );
    expect(operations.length).toBeGreaterThan(30);
    const runsEach = Math.ceil(TOTAL_CASES / operations.length);
    let cases = 0;
    const statuses = new Map<number, number>();
    for (const { path, method, operation } of operations) {
      await ensureFixtures(siteUrl);
      await fc.assert(
        fc.asyncProperty(requestsFor(path, method, operation), async (request) => {
          cases++;
          const answer = await send(method, request);
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          const where = `${method.toUpperCase()} ${path} → ${answer.status} ${answer.text.slice(0, 300)}`;
          if (process.env.SITEWARDEN_FUZZ_REPORT && answer.status === 504)
            console.log(where, JSON.stringify(request).slice(0, 400));
          expect(answer.status, where).not.toBe(500);
          // The approval callback is a page in the approving admin's browser: browsers get its errors as HTML (documented).
          const browserPage = path === '/authorization/callback' && request.headers.accept?.includes('text/html');
          if (answer.status >= 400 && !(browserPage && answer.contentType.startsWith('text/html'))) {
            expect(answer.contentType, where).toBe('application/problem+json');
            const problem = JSON.parse(answer.text) as { type?: unknown; title?: unknown; status?: unknown };
            expect(typeof problem.type, where).toBe('string');
            expect(typeof problem.title, where).toBe('string');
            expect(problem.status, where).toBe(answer.status);
          }
        }),
        {
          numRuns: runsEach,
          seed: process.env.SITEWARDEN_FUZZ_SEED ? Number(process.env.SITEWARDEN_FUZZ_SEED) : undefined,
        },
      );
    }
    if (process.env.SITEWARDEN_FUZZ_REPORT)
      console.log(`${cases} cases:`, JSON.stringify([...statuses].sort((a, b) => a[0] - b[0])));
    expect(cases).toBeGreaterThanOrEqual(TOTAL_CASES);
    // The generated requests reach past validation: successes and site answers, not only 400s and 404s.
    for (const status of [200, 201, 202, 204, 400, 404, 422])
      expect(statuses.get(status) ?? 0, `answers with ${status}: ${JSON.stringify([...statuses])}`).toBeGreaterThan(0);
    expect(tripwire.violations).toEqual([]);
  });

  it('has a tripwire that refuses non-loopback connections and lookups before they leave the process', async () => {
    const { Socket } = await import('node:net');
    const dns = await import('node:dns');
    const reached: unknown[] = [];
    const { passThrough, passThroughLookup } = tripwire;
    // Nothing really connects or resolves in this check: a permitted call lands here instead.
    tripwire.passThrough = (socket, args) => (reached.push(args), socket);
    tripwire.passThroughLookup = (_original, _thisArg, args) => reached.push(args);
    try {
      expect(() => new Socket().connect({ host: '192.0.2.1', port: 9 })).toThrow(/tripwire/);
      expect(() => new Socket().connect(9, 'example.com')).toThrow(/tripwire/);
      new Socket().connect({ host: '127.0.0.1', port: 9 });
      expect(() => dns.promises.lookup('example.com')).toThrow(/tripwire/);
      expect(() => dns.lookup('example.com', () => undefined)).toThrow(/tripwire/);
      dns.lookup('localhost', () => undefined);
    } finally {
      Object.assign(tripwire, { passThrough, passThroughLookup });
    }
    expect(reached).toHaveLength(2);
    expect(tripwire.violations.splice(0)).toEqual([
      'connect 192.0.2.1',
      'connect example.com',
      'dns.promises.lookup example.com',
      'dns.lookup example.com',
    ]);
    expect([
      isLoopbackHost('127.0.0.2'),
      isLoopbackHost('[::1]'),
      isLoopbackHost('::ffff:127.0.0.1'),
      isLoopbackHost('10.0.0.1'),
      isLoopbackHost('localhost.example.com'),
    ]).toEqual([true, true, true, false, false]);
  });
});
