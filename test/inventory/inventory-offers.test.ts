import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeWordPress, type FakeWordPress } from '../support/fake-wordpress/index.js';
import { createFakeClock, createTestApp, type TestApp } from '../support/test-app.js';
import type { Plugin } from '../../src/inventory/index.js';
import type { AvailableUpdates, ConnectorInfo } from '../../src/wordpress/connector-client.js';

/**
 * The inventory beyond plugins and themes, as a sync stores it from connector 1.4.0: the site's time
 * zone and database, WordPress and translation offers, plugin requirements, and when each offered
 * version was first seen (what update policies' release delays count from). Older connectors: unknown.
 */
const START = new Date('2026-02-01T00:00:00Z');
const HOUR = 3_600_000;
let t: TestApp;
let fake: FakeWordPress;
let clock: ReturnType<typeof createFakeClock>;
let siteId: string;

const info = (extra: Record<string, unknown>) => ({
  connector: '1.4.0',
  features: ['updates', 'plugins/update', 'themes', 'backups', 'restore', 'plugins/status', 'core', 'translations'],
  wordpress: '6.5.3',
  php: '8.2.1',
  multisite: false,
  filesystem: 'direct',
  capabilities: {},
  ...extra,
});
const updates = (extra: Record<string, unknown>) => ({
  checkedAt: clock.now().toISOString(),
  plugins: { 'akismet/akismet.php': { slug: 'akismet', version: '1.0.0', newVersion: '1.1.0' } },
  themes: {},
  ...extra,
});

beforeAll(async () => {
  clock = createFakeClock(START);
  t = createTestApp({ clock });
  fake = await startFakeWordPress();
  fake.answers['GET sitewarden/v1/info'] = info({
    timezone: { string: 'Europe/Berlin', gmtOffset: 1 },
    database: { type: 'mariadb', version: '10.11.6' },
  });
  fake.answers['GET sitewarden/v1/updates'] = updates({
    requires: { 'hello-dolly/hello-dolly.php': ['akismet'] },
    core: [{ version: '6.6.1' }, { version: '6.5.5' }],
    translations: [{ type: 'plugin', slug: 'akismet', language: 'de_DE', version: '1.1.0' }],
  });
  const connected = await t.call('POST', '/api/sites', {
    json: { url: fake.url, username: fake.username, applicationPassword: fake.applicationPassword },
  });
  expect(connected.status, connected.text).toBe(201);
  siteId = connected.json.id;
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

const offers = async () =>
  Object.fromEntries(
    (await t.services.inventories.details(siteId)).offers.map((offer) => [
      `${offer.type}:${offer.slug}@${offer.version}`,
      offer.firstSeenAt.toISOString(),
    ]),
  );

describe('a sync with connector 1.4.0', () => {
  it('stores the time zone, the database, the WordPress and translation offers, each first seen now', async () => {
    await t.services.sync.syncNow(siteId);
    expect((await t.services.inventories.details(siteId)).environment).toEqual({
      databaseType: 'mariadb',
      databaseVersion: '10.11.6',
      timeZone: 'Europe/Berlin',
    });
    expect(await offers()).toEqual({
      'core:wordpress@6.5.5': START.toISOString(),
      'core:wordpress@6.6.1': START.toISOString(),
      'plugin:akismet@1.1.0': START.toISOString(),
      'translation:plugin/akismet/de_DE@1.1.0': START.toISOString(),
    });
  });

  it('answers it at GET /api/sites/{siteId}/inventory, core offers marked minor or major', async () => {
    const inventory = await t.call('GET', `/api/sites/${siteId}/inventory`, { token: t.readToken });
    expect(inventory.status, inventory.text).toBe(200);
    const seen = START.toISOString();
    expect(inventory.json).toEqual({
      siteId,
      syncedAt: seen,
      wordpress: {
        version: '6.5.3',
        offers: [
          { version: '6.6.1', kind: 'major', firstSeenAt: seen },
          { version: '6.5.5', kind: 'minor', firstSeenAt: seen },
        ],
      },
      php: '8.2.1',
      database: { type: 'mariadb', version: '10.11.6' },
      timeZone: 'Europe/Berlin',
      updates: [{ type: 'plugin', slug: 'akismet', version: '1.1.0', firstSeenAt: seen }],
      translations: [{ type: 'plugin', slug: 'akismet', language: 'de_DE', version: '1.1.0', firstSeenAt: seen }],
    });
    const missing = await t.call('GET', '/api/sites/site_00000000000000000000000000/inventory');
    expect([missing.status, missing.json.type]).toEqual([404, '/problems/site-not-found']);
  });

  it("stores each plugin's requirements and dependents", async () => {
    const plugins = JSON.parse((await t.services.inventories.read(siteId))!.pluginsJson);
    expect(plugins).toEqual([
      expect.objectContaining({ slug: 'akismet', requires: [], requiredBy: ['hello-dolly'] }),
      expect.objectContaining({ slug: 'hello-dolly', requires: ['akismet'], requiredBy: [] }),
    ]);
  });

  it('keeps the first sighting across syncs while the same version is offered, and starts afresh for a new one', async () => {
    clock.advance(12 * HOUR);
    await t.services.sync.syncNow(siteId);
    expect((await offers())['plugin:akismet@1.1.0']).toBe(START.toISOString());

    clock.advance(12 * HOUR);
    fake.answers['GET sitewarden/v1/updates'] = updates({
      plugins: { 'akismet/akismet.php': { slug: 'akismet', version: '1.0.0', newVersion: '1.2.0' } },
      core: [{ version: '6.6.1' }],
    });
    await t.services.sync.syncNow(siteId);
    const later = new Date(START.getTime() + 24 * HOUR).toISOString();
    // 6.5.5 and the language pack are no longer offered: gone. 6.6.1 still is: its sighting stays.
    expect(await offers()).toEqual({ 'core:wordpress@6.6.1': START.toISOString(), 'plugin:akismet@1.2.0': later });
  });

  it('reads WordPress’s gmt_offset when no city is set', async () => {
    fake.answers['GET sitewarden/v1/info'] = info({ timezone: { string: '', gmtOffset: 5.5 }, database: null });
    await t.services.sync.syncNow(siteId);
    expect((await t.services.inventories.details(siteId)).environment).toEqual({
      databaseType: null,
      databaseVersion: null,
      timeZone: 'UTC+05:30',
    });
  });
});

describe('after updates the connector reported as done (a bulk site update)', () => {
  it('reads the connector’s info once per sync', async () => {
    fake.requests.length = 0;
    await t.services.sync.syncNow(siteId);
    expect(fake.requests.filter((route) => route === 'sitewarden/v1/info')).toHaveLength(1);
  });

  it('patches the stored inventory from the answers with no request: new version, no update pending, other offers kept', async () => {
    const stored = async () => JSON.parse((await t.services.inventories.read(siteId))!.pluginsJson) as Plugin[];
    const akismet = (await stored()).find((plugin) => plugin.slug === 'akismet')!;
    expect(akismet.update).not.toBeNull();
    const before = await offers();
    fake.requests.length = 0;
    await t.services.sync.recordApplied(siteId, {
      updates: {
        checkedAt: clock.now().toISOString(),
        plugins: { [akismet.file]: { slug: 'akismet', version: akismet.version, newVersion: akismet.update!.version } },
        themes: {},
        core: [{ version: '6.6.1' }],
        translations: [],
      } as unknown as AvailableUpdates,
      info: info({ timezone: { string: '', gmtOffset: 5.5 }, database: null }) as ConnectorInfo,
      plugins: new Map([[akismet.file, { version: akismet.update!.version, active: true }]]),
      themes: new Map(),
    });
    expect(fake.requests).toEqual([]);
    expect((await stored()).find((plugin) => plugin.slug === 'akismet')).toMatchObject({
      version: akismet.update!.version,
      update: null,
    });
    expect(await offers()).toEqual({ 'core:wordpress@6.6.1': before['core:wordpress@6.6.1'] });
    expect((await t.services.inventories.details(siteId)).environment?.timeZone).toBe('UTC+05:30');
  });
});

describe('after updates that checked their own offers (connector 1.5.0, no offers read)', () => {
  it('changes only the items answered: their version, offer left and requirements; every other offer stays', async () => {
    fake.answers['GET sitewarden/v1/updates'] = updates({
      requires: { 'hello-dolly/hello-dolly.php': ['akismet'] },
      core: [{ version: '6.6.1' }],
      translations: [{ type: 'plugin', slug: 'akismet', language: 'de_DE', version: '1.1.0' }],
    });
    await t.services.sync.syncNow(siteId);
    const stored = async () => JSON.parse((await t.services.inventories.read(siteId))!.pluginsJson) as Plugin[];
    const akismet = (await stored()).find((plugin) => plugin.slug === 'akismet')!;
    const before = await offers();
    const environment = (await t.services.inventories.details(siteId)).environment;
    fake.requests.length = 0;

    await t.services.sync.recordApplied(siteId, {
      updates: null,
      info: null,
      plugins: new Map([[akismet.file, { version: '1.1.0', active: true, offer: null, requires: ['hello-dolly'] }]]),
      themes: new Map(),
    });

    expect(fake.requests).toEqual([]);
    expect(
      (await stored()).map(({ slug, version, update, requires, requiredBy }) => ({
        slug,
        version,
        update,
        requires,
        requiredBy,
      })),
    ).toEqual([
      { slug: 'akismet', version: '1.1.0', update: null, requires: ['hello-dolly'], requiredBy: ['hello-dolly'] },
      {
        slug: 'hello-dolly',
        version: expect.any(String),
        update: null,
        requires: ['akismet'],
        requiredBy: ['akismet'],
      },
    ]);
    // The plugin's offer is gone; WordPress's and the translation's stay, first seen as before.
    const { ['plugin:akismet@1.1.0']: updated, ...others } = before;
    expect(updated).toBeDefined();
    expect(await offers()).toEqual(others);
    // The environment stays as the sync stored it.
    expect((await t.services.inventories.details(siteId)).environment).toEqual(environment);
  });
});

describe('a patch writes the rows of the items answered only', () => {
  const rows = () =>
    t.database.sqlite
      .prepare(
        'SELECT type, slug, version, update_version, active FROM inventory_items WHERE site_id = ? ORDER BY slug',
      )
      .all(siteId) as { type: string; slug: string; version: string; update_version: string | null; active: number }[];

  it('records the offer an update left, first seen now, and leaves every other item’s row and offer as stored', async () => {
    fake.answers['GET sitewarden/v1/updates'] = updates({
      plugins: {
        'akismet/akismet.php': { slug: 'akismet', version: '1.0.0', newVersion: '1.1.0' },
        'hello-dolly/hello-dolly.php': { slug: 'hello-dolly', version: '1.6', newVersion: '1.7.2' },
      },
      core: [{ version: '6.6.1' }],
    });
    await t.services.sync.syncNow(siteId);
    const akismet = (JSON.parse((await t.services.inventories.read(siteId))!.pluginsJson) as Plugin[]).find(
      (plugin) => plugin.slug === 'akismet',
    )!;
    const before = await offers();
    const hello = rows().find((row) => row.slug === 'hello-dolly');
    expect(hello?.update_version).toBe('1.7.2');
    clock.advance(HOUR);

    await t.services.sync.recordApplied(siteId, {
      updates: null,
      info: null,
      plugins: new Map([
        [akismet.file, { version: '1.1.0', active: false, offer: { version: '1.1.0', newVersion: '1.2.0' } }],
      ]),
      themes: new Map(),
    });

    expect(rows().find((row) => row.slug === 'akismet')).toEqual({
      type: 'plugin',
      slug: 'akismet',
      version: '1.1.0',
      update_version: '1.2.0',
      active: 0,
    });
    expect(rows().find((row) => row.slug === 'hello-dolly')).toEqual(hello);
    const { ['plugin:akismet@1.1.0']: replaced, ...others } = before;
    expect(replaced).toBeDefined();
    expect(await offers()).toEqual({ ...others, 'plugin:akismet@1.2.0': clock.now().toISOString() });
  });
});

describe('an older or odd connector', () => {
  it('leaves what it does not say unknown (null), and a malformed extra is unknown, not a failed sync', async () => {
    fake.answers['GET sitewarden/v1/info'] = info({ connector: '1.3.0' });
    fake.answers['GET sitewarden/v1/updates'] = updates({});
    await t.services.sync.syncNow(siteId);
    expect((await t.services.sitesRepository.findById(siteId))?.syncError).toBeNull();
    expect((await t.services.inventories.details(siteId)).environment).toEqual({
      databaseType: null,
      databaseVersion: null,
      timeZone: null,
    });
    expect(JSON.parse((await t.services.inventories.read(siteId))!.pluginsJson)[0]).toMatchObject({
      requires: null,
      requiredBy: null,
    });

    fake.answers['GET sitewarden/v1/info'] = info({
      timezone: { string: 'Mars/Olympus', gmtOffset: 'lots' },
      database: { type: 'oracle', version: 'x' },
    });
    fake.answers['GET sitewarden/v1/updates'] = updates({ core: 'everything', translations: [{ nope: true }] });
    await t.services.sync.syncNow(siteId);
    expect((await t.services.sitesRepository.findById(siteId))?.syncError).toBeNull();
    expect((await t.services.inventories.details(siteId)).environment?.timeZone).toBeNull();
    expect(await offers()).toEqual({ 'plugin:akismet@1.1.0': clock.now().toISOString() });
  });
});
