import { sql } from 'drizzle-orm';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { rowsOf, tableFor } from '../../src/db/dialect.js';
import type { StateDatabase } from '../../src/db/state-db.js';
import { pgSites, sites as sqliteSites } from '../../src/sites/index.js';
import { createSitesRepository } from '../../src/sites/sites.repository.js';
import type * as pg from '../../src/update-policies/update-policies.pg-table.js';
import {
  createUpdatePoliciesRepository,
  type StoredPolicy,
} from '../../src/update-policies/update-policies.repository.js';
import { PolicySettingsSchema } from '../../src/update-policies/update-policies.schemas.js';
import type * as sqlite from '../../src/update-policies/update-policies.table.js';
import { dialects, stateDatabaseFor, type RowsOf } from '../support/dialects.js';

/**
 * The update policies and the windows they started, on both dialects (issue 34,
 * docs/design/cluster-state.md): one test body on SQLite `:memory:` and on a database of the run's
 * PostgreSQL cluster. What two ticks or two requests at once could both decide is the statement's own
 * condition here: a site or tag has one policy, a window starts once on a site.
 */
const at = (ms: number) => new Date(Date.UTC(2026, 0, 14) + ms);
const HOUR = 3_600_000;
const WINDOW = { start: at(2 * HOUR), end: at(4 * HOUR) };

/** Connected sites, written in one statement (a thousand of them for a claim of many). */
async function withSites(state: StateDatabase, ...ids: string[]) {
  const sites = tableFor(state.dialect, { sqlite: sqliteSites, postgres: pgSites });
  await state.run((db) =>
    db.insert(sites).values(
      ids.map((id) => ({
        id,
        url: `https://${id}.example.test`,
        restUrl: `https://${id}.example.test/wp-json/`,
        state: 'connected' as const,
        createdAt: at(0),
        updatedAt: at(0),
      })),
    ),
  );
  return createSitesRepository(state);
}

const settings = (fields: Record<string, unknown> = {}) =>
  PolicySettingsSchema.parse({ window: { days: ['wed'], start: '02:00', end: '04:00' }, ...fields });

const policy = (id: string, scope: { siteId: string } | { tag: string }, fields: Partial<StoredPolicy> = {}) => ({
  id,
  name: `policy ${id}`,
  siteId: null,
  tag: null,
  ...scope,
  priority: 0,
  settings: settings(),
  createdAt: at(1),
  updatedAt: at(1),
  ...fields,
});

describe('the update policies tables of the two dialects', () => {
  it('give the repositories the same rows', () => {
    expectTypeOf<RowsOf<typeof pg.updatePolicies>>().toEqualTypeOf<RowsOf<typeof sqlite.updatePolicies>>();
    expectTypeOf<RowsOf<typeof pg.updatePolicyRuns>>().toEqualTypeOf<RowsOf<typeof sqlite.updatePolicyRuns>>();
  });
});

describe.each(dialects)('the update policies repository on %s', (dialect) => {
  const state = stateDatabaseFor(dialect, 'update-policies-repository');

  it('writes a policy as given, its settings parsed back and its dates to the millisecond, and lists them in id order', async () => {
    await withSites(state(), 'site_a');
    const repository = createUpdatePoliciesRepository(state());
    const custom = settings({
      enabled: false,
      kinds: { plugins: true, themes: true },
      window: { days: ['sat', 'sun'], start: '22:00', end: '04:00', timeZone: 'Europe/Berlin' },
      releaseDelayDays: 3,
      pins: [{ type: 'plugin', slug: 'forms', version: '1.2.3' }],
      ignore: [{ type: 'theme', slug: 'twentytwenty' }],
    });
    const tagged = policy('upol_2', { tag: 'client:acme' }, { priority: -5, settings: custom, createdAt: at(1_234) });
    const own = policy('upol_1', { siteId: 'site_a' }, { updatedAt: at(5_678) });
    expect(await repository.insert(tagged)).toBe(true);
    expect(await repository.insert(own)).toBe(true);

    expect(await repository.find('upol_2')).toEqual(tagged);
    expect(await repository.find('upol_1')).toEqual(own);
    expect(await repository.find('upol_none')).toBeUndefined();
    expect(await repository.list()).toEqual([own, tagged]);
  });

  it('gives a site or a tag one policy: a second is not written, whoever asks at once', async () => {
    await withSites(state(), 'site_a');
    const repository = createUpdatePoliciesRepository(state());
    const answers = await Promise.all([
      repository.insert(policy('upol_1', { tag: 'nightly' })),
      repository.insert(policy('upol_2', { tag: 'nightly' })),
      repository.insert(policy('upol_3', { siteId: 'site_a' })),
      repository.insert(policy('upol_4', { siteId: 'site_a' })),
    ]);
    expect(answers.filter(Boolean)).toHaveLength(2);
    const held = await repository.list();
    expect(held.map((p) => p.tag ?? p.siteId).sort()).toEqual(['nightly', 'site_a']);
    // Another tag, and a tag policy beside a site policy, are written.
    expect(await repository.insert(policy('upol_5', { tag: 'weekly' }))).toBe(true);
    expect(await repository.list()).toHaveLength(3);
  });

  it('replaces a policy’s name, priority and settings, and only one that exists', async () => {
    const repository = createUpdatePoliciesRepository(state());
    await repository.insert(policy('upol_1', { tag: 'nightly' }));
    const changed = settings({ releaseDelayDays: 7, safe: false });
    const replaced = await repository.replace('upol_1', {
      name: 'renamed',
      priority: 9,
      settings: changed,
      updatedAt: at(HOUR),
    });
    expect(replaced).toEqual({
      ...policy('upol_1', { tag: 'nightly' }),
      name: 'renamed',
      priority: 9,
      settings: changed,
      updatedAt: at(HOUR),
    });
    expect(await repository.find('upol_1')).toEqual(replaced);
    expect(
      await repository.replace('upol_none', { name: 'x', priority: 0, settings: changed, updatedAt: at(HOUR) }),
    ).toBeUndefined();
    expect(await repository.find('upol_none')).toBeUndefined();
  });

  it('removes a policy once, with the runs it started', async () => {
    await withSites(state(), 'site_a');
    const repository = createUpdatePoliciesRepository(state());
    await repository.insert(policy('upol_1', { tag: 'nightly' }));
    await repository.claim('upol_1', WINDOW, [{ siteId: 'site_a', targets: 2 }], at(2 * HOUR));
    expect(await repository.remove('upol_1')).toBe(true);
    expect(await repository.remove('upol_1')).toBe(false);
    expect(await repository.list()).toEqual([]);
    expect(await repository.sitesRun('upol_1', WINDOW.start)).toEqual(new Set());
  });

  it('claims a window once per site: a second claim, at once or later, gets only the sites not yet claimed', async () => {
    await withSites(state(), 'site_a', 'site_b', 'site_c');
    const repository = createUpdatePoliciesRepository(state());
    await repository.insert(policy('upol_1', { tag: 'nightly' }));
    const sites = (...ids: string[]) => ids.map((siteId) => ({ siteId, targets: 3 }));

    const [first, second] = await Promise.all([
      repository.claim('upol_1', WINDOW, sites('site_a', 'site_b'), at(2 * HOUR)),
      repository.claim('upol_1', WINDOW, sites('site_b', 'site_a'), at(2 * HOUR)),
    ]);
    expect([...first, ...second].sort()).toEqual(['site_a', 'site_b']);
    expect(await repository.claim('upol_1', WINDOW, sites('site_a', 'site_c'), at(2 * HOUR + 60_000))).toEqual([
      'site_c',
    ]);
    expect(await repository.claim('upol_1', WINDOW, [], at(2 * HOUR))).toEqual([]);
    expect(await repository.sitesRun('upol_1', WINDOW.start)).toEqual(new Set(['site_a', 'site_b', 'site_c']));
    expect(await repository.hasRun('upol_1', 'site_c', WINDOW.start)).toBe(true);
    // The next window is a new one.
    const next = { start: at(170 * HOUR), end: at(172 * HOUR) };
    expect(await repository.hasRun('upol_1', 'site_a', next.start)).toBe(false);
    expect(await repository.claim('upol_1', next, sites('site_a'), next.start)).toEqual(['site_a']);

    // What the database holds: each claim's window, time and targets, no job yet.
    const rows = await state().run((db) =>
      rowsOf<{ site_id: string; targets: number; job_id: string | null }>(
        state(),
        db,
        sql`select site_id, targets, job_id from update_policy_runs where policy_id = 'upol_1' and site_id = 'site_c'`,
      ),
    );
    expect(rows).toEqual([{ site_id: 'site_c', targets: 3, job_id: null }]);
  });

  it('claims a thousand sites in one go, or none of them when one cannot be claimed', async () => {
    const ids = Array.from({ length: 1_100 }, (_, i) => `site_${String(i).padStart(4, '0')}`);
    await withSites(state(), ...ids);
    const repository = createUpdatePoliciesRepository(state());
    await repository.insert(policy('upol_1', { tag: 'nightly' }));
    const targets = ids.map((siteId) => ({ siteId, targets: 1 }));

    // A site removed after the tick read it: nothing is claimed, and the next tick claims the rest.
    const gone = [...targets, { siteId: 'site_gone', targets: 1 }];
    await expect(repository.claim('upol_1', WINDOW, gone, at(2 * HOUR))).rejects.toThrow();
    expect(await repository.sitesRun('upol_1', WINDOW.start)).toEqual(new Set());

    const claimed = await repository.claim('upol_1', WINDOW, targets, at(2 * HOUR));
    expect(claimed.sort()).toEqual(ids);
    expect(await repository.claim('upol_1', WINDOW, targets.slice(0, 600), at(2 * HOUR))).toEqual([]);
    expect((await repository.sitesRun('upol_1', WINDOW.start)).size).toBe(1_100);

    // A run that did not start gives its sites back; one that did records its job on each.
    await repository.release('upol_1', WINDOW.start, ids.slice(0, 700));
    expect((await repository.sitesRun('upol_1', WINDOW.start)).size).toBe(400);
    await repository.recordJob('upol_1', WINDOW.start, ids.slice(700), 'bulk_1');
    const jobs = await state().run((db) =>
      rowsOf<{ job_id: string | null; sites: number }>(
        state(),
        db,
        sql`select job_id, cast(count(*) as integer) as sites from update_policy_runs group by job_id`,
      ),
    );
    expect(jobs).toEqual([{ job_id: 'bulk_1', sites: 400 }]);
  });

  it('gives back and records only the window and policy named', async () => {
    await withSites(state(), 'site_a');
    const repository = createUpdatePoliciesRepository(state());
    await repository.insert(policy('upol_1', { tag: 'nightly' }));
    await repository.insert(policy('upol_2', { tag: 'weekly' }));
    const later = { start: at(170 * HOUR), end: at(172 * HOUR) };
    const one = [{ siteId: 'site_a', targets: 1 }];
    await repository.claim('upol_1', WINDOW, one, at(2 * HOUR));
    await repository.claim('upol_1', later, one, later.start);
    await repository.claim('upol_2', WINDOW, one, at(2 * HOUR));

    await repository.recordJob('upol_1', WINDOW.start, ['site_a'], 'bulk_1');
    await repository.release('upol_1', later.start, ['site_a']);
    expect(await repository.hasRun('upol_1', 'site_a', WINDOW.start)).toBe(true);
    expect(await repository.hasRun('upol_1', 'site_a', later.start)).toBe(false);
    expect(await repository.hasRun('upol_2', 'site_a', WINDOW.start)).toBe(true);
    const jobs = await state().run((db) =>
      rowsOf<{ policy_id: string; job_id: string | null }>(
        state(),
        db,
        sql`select policy_id, job_id from update_policy_runs order by policy_id`,
      ),
    );
    expect(jobs).toEqual([
      { policy_id: 'upol_1', job_id: 'bulk_1' },
      { policy_id: 'upol_2', job_id: null },
    ]);
  });

  it('loses a site’s policy and runs with the site, and keeps the others', async () => {
    const sites = await withSites(state(), 'site_a', 'site_b');
    const repository = createUpdatePoliciesRepository(state());
    await repository.insert(policy('upol_1', { siteId: 'site_a' }));
    await repository.insert(policy('upol_2', { tag: 'nightly' }));
    await repository.claim(
      'upol_2',
      WINDOW,
      [
        { siteId: 'site_a', targets: 1 },
        { siteId: 'site_b', targets: 1 },
      ],
      at(2 * HOUR),
    );

    await sites.delete('site_a');
    expect((await repository.list()).map((p) => p.id)).toEqual(['upol_2']);
    expect(await repository.sitesRun('upol_2', WINDOW.start)).toEqual(new Set(['site_b']));
  });
});
