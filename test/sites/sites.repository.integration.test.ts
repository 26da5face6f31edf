import { sql } from 'drizzle-orm';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { isUniqueViolation, rowsOf } from '../../src/db/dialect.js';
import type { sites as pgSites, siteTags as pgSiteTags } from '../../src/sites/sites.pg-table.js';
import { createSitesRepository } from '../../src/sites/sites.repository.js';
import type { sites, siteTags } from '../../src/sites/sites.table.js';
import { type NewSiteRow } from '../../src/sites/sites.table.js';
import { dialects, stateDatabaseFor, type RowsOf } from '../support/dialects.js';

/**
 * The sites and their tags on both dialects (issue 34, docs/design/cluster-state.md): one test body on
 * SQLite `:memory:` (where the hottest reads are prepared statements) and on a database of the run's
 * PostgreSQL cluster (where the same queries are built per call).
 */
const at = (ms: number) => new Date(Date.UTC(2026, 10, 29) + ms);
const site = (id: string, fields: Partial<NewSiteRow> = {}): NewSiteRow => ({
  id,
  url: `https://${id}.example.test`,
  restUrl: `https://${id}.example.test/wp-json/`,
  state: 'connected',
  createdAt: at(0),
  updatedAt: at(0),
  ...fields,
});

describe('the sites tables of the two dialects', () => {
  it('give the repository the same rows', () => {
    expectTypeOf<RowsOf<typeof pgSites>>().toEqualTypeOf<RowsOf<typeof sites>>();
    expectTypeOf<RowsOf<typeof pgSiteTags>>().toEqualTypeOf<RowsOf<typeof siteTags>>();
  });
});

describe.each(dialects)('the sites repository on %s', (dialect) => {
  const state = stateDatabaseFor(dialect, 'sites-repository');

  it('writes a site as stored and finds it by id, url and authorization state, its dates to the millisecond', async () => {
    const repository = createSitesRepository(state());
    const written = await repository.insert(
      site('site_a', { state: 'pending', authorizationStateHash: 'hash-a', authorizationExpiresAt: at(1_234) }),
    );
    expect(written).toMatchObject({ id: 'site_a', state: 'pending', name: null, authorizationExpiresAt: at(1_234) });
    expect(await repository.findById('site_a')).toEqual(written);
    expect(await repository.findByUrl('https://site_a.example.test')).toEqual(written);
    expect(await repository.findByAuthorizationState('hash-a')).toEqual(written);
    expect(await repository.findForAccess('site_a')).toEqual({
      id: 'site_a',
      url: written.url,
      restUrl: written.restUrl,
      state: 'pending',
      username: null,
      credentialSealed: null,
      connectorVersion: null,
    });
    expect(await repository.findById('site_none')).toBeUndefined();
    expect(await repository.findForAccess('site_none')).toBeUndefined();
  });

  it('refuses a second site at a url as a unique violation, and keeps the first', async () => {
    const repository = createSitesRepository(state());
    await repository.insert(site('site_a', { url: 'https://same.example.test' }));
    const second = repository.insert(site('site_b', { url: 'https://same.example.test' }));
    await expect(second).rejects.toSatisfy(isUniqueViolation);
    expect(await repository.allIds()).toEqual(new Set(['site_a']));
  });

  it('lists a page at a time in id order, in a state or all, without credentials', async () => {
    const repository = createSitesRepository(state());
    for (const id of ['site_c', 'site_a', 'site_d', 'site_b'])
      await repository.insert(
        site(id, { state: id === 'site_b' ? 'pending' : 'connected', credentialSealed: 'sealed' }),
      );
    const ids = (rows: { id: string }[]) => rows.map((row) => row.id);
    expect(ids(await repository.list({ limit: 2 }))).toEqual(['site_a', 'site_b']);
    expect(ids(await repository.list({ limit: 2, after: 'site_b' }))).toEqual(['site_c', 'site_d']);
    expect(ids(await repository.list({ limit: 10, states: ['connected'] }))).toEqual(['site_a', 'site_c', 'site_d']);
    expect(ids(await repository.list({ limit: 10, after: 'site_a', states: ['connected'] }))).toEqual([
      'site_c',
      'site_d',
    ]);
    expect(ids(await repository.list({ limit: 10, states: ['connected', 'pending'] }))).toHaveLength(4);
    const [first] = await repository.list({ limit: 1 });
    expect(first).not.toHaveProperty('credentialSealed');
    expect(first).not.toHaveProperty('authorizationStateHash');
  });

  it('filters by words in the url or name (any case, wildcards literal), by versions and by tags', async () => {
    const repository = createSitesRepository(state());
    await repository.insert(site('site_a', { name: 'Acme Shop', wordpressVersion: '6.5.5', phpVersion: '8.2.1' }));
    await repository.insert(site('site_b', { name: '100%_Blog', wordpressVersion: '6.5-RC1', phpVersion: '8.1.0' }));
    await repository.insert(site('site_c', { url: 'https://ACME.example.test', wordpressVersion: '6.4.3' }));
    await repository.setTags('site_a', ['client:acme', 'staging']);
    await repository.setTags('site_c', ['client:acme']);
    const ids = async (filter: Parameters<typeof repository.list>[0]['filter']) =>
      (await repository.list({ limit: 10, filter })).map((row) => row.id);
    expect(await ids({ q: 'acme' })).toEqual(['site_a', 'site_c']);
    expect(await ids({ q: '%_' })).toEqual(['site_b']);
    expect(await ids({ q: '_' })).toEqual(['site_a', 'site_b']);
    expect(await ids({ wordpressVersion: '6.5' })).toEqual(['site_a', 'site_b']);
    expect(await ids({ phpVersion: '8.2' })).toEqual(['site_a']);
    expect(await ids({ tag: ['client:acme'] })).toEqual(['site_a', 'site_c']);
    expect(await ids({ tag: ['client:acme', 'staging'] })).toEqual(['site_a']);
    expect(await repository.connectedIds({ tag: ['client:acme'] })).toEqual(['site_a', 'site_c']);
    expect(await repository.connectedIds()).toEqual(['site_a', 'site_b', 'site_c']);
  });

  it('keeps a site’s tags as set, counts them per scope, and shows a scoped request only its sites', async () => {
    const repository = createSitesRepository(state());
    for (const id of ['site_a', 'site_b', 'site_c']) await repository.insert(site(id));
    await repository.setTags('site_a', ['team-x', 'blog']);
    await repository.setTags('site_b', ['team-y', 'blog']);
    await repository.setTags('site_a', ['team-x']);
    expect(await repository.tagsOf(['site_a', 'site_b', 'site_c', 'site_none'])).toEqual(
      new Map([
        ['site_a', ['team-x']],
        ['site_b', ['blog', 'team-y']],
        ['site_c', []],
        ['site_none', []],
      ]),
    );
    expect(await repository.tagsOf([])).toEqual(new Map());
    expect(await repository.tagCounts()).toEqual([
      { tag: 'blog', sites: 1 },
      { tag: 'team-x', sites: 1 },
      { tag: 'team-y', sites: 1 },
    ]);
    const teamY = { kind: 'tags', tags: ['team-y'] } as const;
    expect(await repository.tagCounts(teamY)).toEqual([
      { tag: 'blog', sites: 1 },
      { tag: 'team-y', sites: 1 },
    ]);
    expect(await repository.isVisible('site_b', teamY)).toBe(true);
    expect(await repository.isVisible('site_a', teamY)).toBe(false);
    expect(await repository.isVisible('site_none', { kind: 'all' })).toBe(false);
    expect(await repository.isVisible('site_a', { kind: 'tags', tags: [] })).toBe(false);
    expect((await repository.list({ limit: 10, scope: teamY })).map((row) => row.id)).toEqual(['site_b']);
    expect(await repository.list({ limit: 10, scope: { kind: 'tags', tags: [] } })).toEqual([]);
  });

  it('replaces a site’s tags all together or not at all', async () => {
    const repository = createSitesRepository(state());
    await repository.insert(site('site_a'));
    await repository.setTags('site_a', ['kept']);
    // The same tag twice breaks the primary key: the delete before it is rolled back with it.
    await expect(repository.setTags('site_a', ['dup', 'dup'])).rejects.toThrow();
    expect((await repository.tagsOf(['site_a'])).get('site_a')).toEqual(['kept']);
    await repository.setTags('site_a', []);
    expect((await repository.tagsOf(['site_a'])).get('site_a')).toEqual([]);
  });

  it('updates and deletes a site, its tags going with it', async () => {
    const repository = createSitesRepository(state());
    await repository.insert(site('site_a'));
    await repository.setTags('site_a', ['blog']);
    expect(await repository.update('site_a', { name: 'Renamed', lastSyncedAt: at(9_999) })).toMatchObject({
      name: 'Renamed',
      lastSyncedAt: at(9_999),
    });
    expect(await repository.update('site_none', { name: 'x' })).toBeUndefined();
    expect(await repository.delete('site_a')).toBe(true);
    expect(await repository.delete('site_a')).toBe(false);
    const tags = await state().run((db) =>
      rowsOf<{ n: number }>(state(), db, sql`select count(*) as n from site_tags`),
    );
    expect(Number(tags[0]!.n)).toBe(0);
  });

  it('answers the schedulers, the metrics and the selections in one query each', async () => {
    const repository = createSitesRepository(state());
    await repository.insert(site('site_a', { lastSyncAttemptAt: at(5), syncError: 'unreachable' }));
    await repository.insert(site('site_b'));
    await repository.insert(
      site('site_c', { state: 'pending', authorizationExpiresAt: at(10), authorizationStateHash: 'c' }),
    );
    await repository.insert(
      site('site_d', { state: 'pending', authorizationExpiresAt: at(20), authorizationStateHash: 'd' }),
    );
    await repository.insert(site('site_e', { state: 'authorization_rejected' }));
    expect(await repository.syncAttempts()).toEqual([
      { id: 'site_a', lastSyncAttemptAt: at(5), failed: true },
      { id: 'site_b', lastSyncAttemptAt: null, failed: false },
    ]);
    expect(await repository.countByState()).toEqual({ connected: 2, pending: 2, authorization_rejected: 1 });
    expect((await repository.expiredAuthorizations(at(15))).map((row) => row.id)).toEqual(['site_c']);
    expect(await repository.statesOf(['site_a', 'site_c', 'site_none', 'site_a'])).toEqual(
      new Map([
        ['site_a', { url: 'https://site_a.example.test', state: 'connected' }],
        ['site_c', { url: 'https://site_c.example.test', state: 'pending' }],
      ]),
    );
    expect(await repository.allIds()).toEqual(new Set(['site_a', 'site_b', 'site_c', 'site_d', 'site_e']));
  });
});
