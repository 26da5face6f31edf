import { sql } from 'drizzle-orm';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { adminLoginSettings as pgAdminLoginSettings } from '../../src/admin-login/admin-login.pg-table.js';
import { createAdminLoginRepository } from '../../src/admin-login/admin-login.repository.js';
import type { adminLoginSettings as sqliteAdminLoginSettings } from '../../src/admin-login/admin-login.table.js';
import { rowsOf } from '../../src/db/dialect.js';
import { createSitesRepository } from '../../src/sites/sites.repository.js';
import { dialects, stateDatabaseFor, type RowsOf } from '../support/dialects.js';

/**
 * The one-click sign-in setting's rows on both dialects (issue 34, docs/design/cluster-state.md): one test
 * body on SQLite `:memory:` and on a database of the run's PostgreSQL cluster.
 */
describe('the admin_login_settings tables', () => {
  it('infer the same row types on both dialects, so the repository reads and writes the same rows', () => {
    expectTypeOf<RowsOf<typeof pgAdminLoginSettings>>().toEqualTypeOf<RowsOf<typeof sqliteAdminLoginSettings>>();
  });
});

describe.each(dialects)('the admin-login repository on %s', (dialect) => {
  const state = stateDatabaseFor(dialect, 'admin-login-repository');
  const addSite = (id: string) =>
    createSitesRepository(state()).insert({
      id,
      url: `https://${id}.example.test`,
      restUrl: `https://${id}.example.test/wp-json/`,
      state: 'connected',
      createdAt: new Date(0),
      updatedAt: new Date(0),
    });

  it('reads no row for a site never set, and the row written once it is', async () => {
    await addSite('site_a');
    const repository = createAdminLoginRepository(state());
    expect(await repository.readSettings('site_a')).toBeUndefined();
    await repository.writeSettings({ siteId: 'site_a', enabled: false });
    expect(await repository.readSettings('site_a')).toEqual({ siteId: 'site_a', enabled: false });
  });

  it('writes a site’s setting over the one it had, one row a site', async () => {
    await addSite('site_a');
    await addSite('site_b');
    const repository = createAdminLoginRepository(state());
    await repository.writeSettings({ siteId: 'site_a', enabled: false });
    await repository.writeSettings({ siteId: 'site_b', enabled: false });
    await repository.writeSettings({ siteId: 'site_a', enabled: true });
    expect(await repository.readSettings('site_a')).toEqual({ siteId: 'site_a', enabled: true });
    expect(await repository.readSettings('site_b')).toEqual({ siteId: 'site_b', enabled: false });
    const counted = await state().run((db) =>
      rowsOf<{ n: number }>(state(), db, sql`select cast(count(*) as integer) as n from admin_login_settings`),
    );
    expect(counted).toEqual([{ n: 2 }]);
  });

  it('refuses a setting for a site that does not exist, and drops a site’s setting with the site', async () => {
    await addSite('site_a');
    const repository = createAdminLoginRepository(state());
    await expect(repository.writeSettings({ siteId: 'site_none', enabled: false })).rejects.toThrow();
    await repository.writeSettings({ siteId: 'site_a', enabled: false });
    expect(await createSitesRepository(state()).delete('site_a')).toBe(true);
    expect(await repository.readSettings('site_a')).toBeUndefined();
  });
});
