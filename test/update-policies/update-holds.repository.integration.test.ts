import { sql } from 'drizzle-orm';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { rowsOf } from '../../src/db/dialect.js';
import type { StateDatabase } from '../../src/db/state-db.js';
import { createSitesRepository } from '../../src/sites/sites.repository.js';
import type { updateHolds as pgUpdateHolds } from '../../src/update-policies/update-holds.pg-table.js';
import { createUpdateHoldsRepository, type NewUpdateHold } from '../../src/update-policies/update-holds.repository.js';
import type { updateHolds as sqliteUpdateHolds } from '../../src/update-policies/update-holds.table.js';
import { dialects, stateDatabaseFor, type RowsOf } from '../support/dialects.js';

/**
 * The versions held on sites after a rollback, on both dialects (issue 34, docs/design/cluster-state.md):
 * one test body on SQLite `:memory:` and on a database of the run's PostgreSQL cluster. A version is held
 * once however many rollbacks report it at once, and released once however many users release it.
 */
const at = (ms: number) => new Date(Date.UTC(2026, 0, 14) + ms);
const token = { kind: 'token', id: 'tok_1' } as const;
const user = { kind: 'user', id: 'usr_1' } as const;
const ids = (holds: { id: string }[]) => holds.map((h) => h.id);

async function withSites(state: StateDatabase, ...ids: string[]) {
  const sites = createSitesRepository(state);
  for (const id of ids)
    await sites.insert({
      id,
      url: `https://${id}.example.test`,
      restUrl: `https://${id}.example.test/wp-json/`,
      state: 'connected',
      createdAt: at(0),
      updatedAt: at(0),
    });
  return sites;
}

const hold = (id: string, siteId: string, fields: Partial<NewUpdateHold> = {}): NewUpdateHold => ({
  id,
  siteId,
  type: 'plugin',
  slug: 'forms',
  version: '1.1.0',
  outcome: 'rolled-back',
  reason: 'after-check-failed',
  message: 'the home page answered 500',
  safeUpdateId: 'supd_1',
  heldAt: at(1_234),
  ...fields,
});

describe('the update holds table of the two dialects', () => {
  it('gives the repository the same rows', () => {
    expectTypeOf<RowsOf<typeof pgUpdateHolds>>().toEqualTypeOf<RowsOf<typeof sqliteUpdateHolds>>();
  });
});

describe.each(dialects)('the update holds repository on %s', (dialect) => {
  const state = stateDatabaseFor(dialect, 'update-holds-repository');

  it('holds a version as given, and reads it back by id', async () => {
    await withSites(state(), 'site_a');
    const repository = createUpdateHoldsRepository(state());
    const written = await repository.hold(hold('hold_1', 'site_a'));
    expect(written).toEqual({
      ...hold('hold_1', 'site_a'),
      releasedAt: null,
      releasedBy: null,
    });
    expect(await repository.find('hold_1')).toEqual(written);
    expect(await repository.find('hold_none')).toBeUndefined();
  });

  it('holds a version once: a rollback again brings the active hold up to it, whoever reports it at once', async () => {
    await withSites(state(), 'site_a');
    const repository = createUpdateHoldsRepository(state());
    const first = await repository.hold(hold('hold_1', 'site_a'));
    const again = await repository.hold(
      hold('hold_2', 'site_a', {
        outcome: 'rollback-failed',
        reason: 'rollback-failed',
        message: null,
        safeUpdateId: 'supd_2',
        heldAt: at(9_999),
      }),
    );
    expect(again).toEqual({
      ...first,
      outcome: 'rollback-failed',
      reason: 'rollback-failed',
      message: null,
      safeUpdateId: 'supd_2',
      heldAt: at(9_999),
    });
    expect(await repository.find('hold_2')).toBeUndefined();

    // Four rollbacks of another version reported at once: one hold, which each answers.
    const held = await Promise.all(
      [3, 4, 5, 6].map((n) => repository.hold(hold(`hold_${n}`, 'site_a', { version: '1.2.0', heldAt: at(n) }))),
    );
    expect(new Set(held.map((h) => h.id)).size).toBe(1);
    const rows = await state().run((db) =>
      rowsOf<{ version: string; holds: number }>(
        state(),
        db,
        sql`select version, cast(count(*) as integer) as holds from update_holds group by version order by version`,
      ),
    );
    expect(rows).toEqual([
      { version: '1.1.0', holds: 1 },
      { version: '1.2.0', holds: 1 },
    ]);
  });

  it('holds the same version of another item, type or site apart', async () => {
    await withSites(state(), 'site_a', 'site_b');
    const repository = createUpdateHoldsRepository(state());
    await repository.hold(hold('hold_1', 'site_a'));
    await repository.hold(hold('hold_2', 'site_b'));
    await repository.hold(hold('hold_3', 'site_a', { slug: 'shop' }));
    await repository.hold(hold('hold_4', 'site_a', { type: 'theme' }));
    expect((await repository.list({ state: 'all', limit: 10 })).map((h) => h.id)).toEqual([
      'hold_4',
      'hold_3',
      'hold_2',
      'hold_1',
    ]);
  });

  it('releases an active hold once, recording who; the version is then held afresh by a new rollback', async () => {
    await withSites(state(), 'site_a');
    const repository = createUpdateHoldsRepository(state());
    await repository.hold(hold('hold_1', 'site_a'));

    const releases = await Promise.all([
      repository.release('hold_1', at(5_000), token),
      repository.release('hold_1', at(5_001), user),
    ]);
    const released = releases.filter((r) => r !== undefined);
    expect(released).toHaveLength(1);
    expect(released[0]).toMatchObject({ id: 'hold_1', releasedAt: expect.any(Date) });
    expect(await repository.find('hold_1')).toEqual(released[0]);
    expect([token, user]).toContainEqual(released[0]!.releasedBy);
    expect(await repository.release('hold_1', at(6_000), token)).toBeUndefined();
    expect(await repository.release('hold_none', at(6_000), token)).toBeUndefined();

    // Rolled back again after the release: a new hold; the released one stays as the record.
    const renewed = await repository.hold(hold('hold_2', 'site_a', { heldAt: at(7_000) }));
    expect(renewed).toMatchObject({ id: 'hold_2', heldAt: at(7_000), releasedAt: null, releasedBy: null });
    expect(await repository.find('hold_1')).toEqual(released[0]);
  });

  it('gives the active holds of many sites, by site', async () => {
    const ids = Array.from({ length: 520 }, (_, i) => `site_${String(i).padStart(3, '0')}`);
    await withSites(state(), ...ids);
    const repository = createUpdateHoldsRepository(state());
    await repository.hold(hold('hold_1', 'site_000'));
    await repository.hold(hold('hold_2', 'site_000', { slug: 'shop' }));
    await repository.hold(hold('hold_3', 'site_519'));
    await repository.hold(hold('hold_4', 'site_100'));
    await repository.release('hold_4', at(5_000), user);

    const active = await repository.activeFor(ids);
    expect([...active.keys()].sort()).toEqual(['site_000', 'site_519']);
    expect(
      active
        .get('site_000')!
        .map((h) => h.slug)
        .sort(),
    ).toEqual(['forms', 'shop']);
    expect(active.get('site_519')!.map((h) => h.id)).toEqual(['hold_3']);
    expect(await repository.activeFor([])).toEqual(new Map());
  });

  it('lists holds newest first by state and site, a page at a time', async () => {
    await withSites(state(), 'site_a', 'site_b');
    const repository = createUpdateHoldsRepository(state());
    await repository.hold(hold('hold_1', 'site_a'));
    await repository.hold(hold('hold_2', 'site_b'));
    await repository.hold(hold('hold_3', 'site_a', { slug: 'shop' }));
    await repository.release('hold_1', at(5_000), user);

    expect(ids(await repository.list({ state: 'held', limit: 10 }))).toEqual(['hold_3', 'hold_2']);
    expect(ids(await repository.list({ state: 'released', limit: 10 }))).toEqual(['hold_1']);
    expect(ids(await repository.list({ state: 'all', siteId: 'site_a', limit: 10 }))).toEqual(['hold_3', 'hold_1']);
    // `limit + 1`: the extra one says a page follows.
    expect(ids(await repository.list({ state: 'all', limit: 1 }))).toEqual(['hold_3', 'hold_2']);
    expect(ids(await repository.list({ state: 'all', limit: 1, before: 'hold_2' }))).toEqual(['hold_1']);
  });

  it('loses a site’s holds with the site, and refuses a hold on a site that is gone', async () => {
    const sites = await withSites(state(), 'site_a', 'site_b');
    const repository = createUpdateHoldsRepository(state());
    await repository.hold(hold('hold_1', 'site_a'));
    await repository.hold(hold('hold_2', 'site_b'));
    await sites.delete('site_a');
    expect(await repository.find('hold_1')).toBeUndefined();
    expect(ids(await repository.list({ state: 'all', limit: 10 }))).toEqual(['hold_2']);
    await expect(repository.hold(hold('hold_3', 'site_a'))).rejects.toThrow();
  });
});
