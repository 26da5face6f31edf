import { sql } from 'drizzle-orm';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { rowsOf } from '../../src/db/dialect.js';
import type { StateDatabase } from '../../src/db/state-db.js';
import type { Role } from '../../src/shared/actor.js';
import type { apiTokens as pgApiTokens } from '../../src/tokens/tokens.pg-table.js';
import { createTokensRepository } from '../../src/tokens/tokens.repository.js';
import type { apiTokens as sqliteApiTokens } from '../../src/tokens/tokens.table.js';
import { dialects, stateDatabaseFor, type RowsOf } from '../support/dialects.js';

/**
 * The API tokens' rows on both dialects (issue 34, docs/design/cluster-state.md): one test body on
 * SQLite `:memory:` and on a database of the run's PostgreSQL cluster (test/support/dialects.ts).
 */
const at = (ms: number) => new Date(Date.UTC(2026, 10, 28) + ms);
type NewToken = typeof sqliteApiTokens.$inferInsert;
const token = (id: string, fields: Partial<NewToken> = {}): NewToken => ({
  id,
  name: `name-${id}`,
  scope: 'read',
  role: 'viewer',
  userId: null,
  tags: null,
  expiresAt: null,
  tokenHash: `hash-${id}`,
  prefix: 'swt_abcdef',
  createdAt: at(0),
  ...fields,
});

/** A user, as the users feature stores one: the tokens read its role and scope tags by name. */
async function addUser(state: StateDatabase, id: string, role: Role, scopeTags: string[] | null): Promise<void> {
  const tags = scopeTags && JSON.stringify(scopeTags);
  if (state.sqlite) {
    state.sqlite
      .prepare(
        `insert into users (id, username, password_hash, role, scope_tags, created_at, password_changed_at)
         values (?, ?, 'x', ?, ?, 0, 0)`,
      )
      .run(id, id, role, tags);
    return;
  }
  await state.db.execute(
    sql`insert into users (id, username, password_hash, role, scope_tags, created_at, password_changed_at)
        values (${id}, ${id}, 'x', ${role}, cast(${tags} as jsonb), now(), now())`,
  );
}

describe('the api_tokens tables', () => {
  it('infer the same row types on both dialects, so the repository reads and writes the same rows', () => {
    expectTypeOf<RowsOf<typeof pgApiTokens>>().toEqualTypeOf<RowsOf<typeof sqliteApiTokens>>();
  });
});

describe.each(dialects)('the tokens repository on %s', (dialect) => {
  const state = stateDatabaseFor(dialect, 'tokens-repository');

  it('writes a token as stored: its dates to the millisecond, its tags a JSON array', async () => {
    const repository = createTokensRepository(state());
    await repository.insert(
      token('tok_1', { tags: ['blue', 'Größe ✓'], userId: 'usr_a', expiresAt: at(86_400_123), createdAt: at(7) }),
    );
    await repository.insert(token('tok_2'));
    expect(await repository.findById('tok_1')).toEqual({
      ...token('tok_1', { tags: ['blue', 'Größe ✓'], userId: 'usr_a', expiresAt: at(86_400_123), createdAt: at(7) }),
      lastUsedAt: null,
      revokedAt: null,
    });
    expect(await repository.findById('tok_2')).toMatchObject({ tags: null, userId: null, expiresAt: null });
    expect(await repository.findById('tok_none')).toBeUndefined();

    // The tags are JSON on both: jsonb on PostgreSQL, JSON text on SQLite.
    const [stored] = await state().run((db) =>
      rowsOf<{ tags: string; kind: string }>(
        state(),
        db,
        dialect === 'postgres'
          ? sql`select cast(tags as text) as tags, jsonb_typeof(tags) as kind from api_tokens where id = 'tok_1'`
          : sql`select tags, json_type(tags) as kind from api_tokens where id = 'tok_1'`,
      ),
    );
    expect(stored!.kind).toBe('array');
    expect(JSON.parse(stored!.tags)).toEqual(['blue', 'Größe ✓']);
  });

  it('keeps one token a hash', async () => {
    const repository = createTokensRepository(state());
    await repository.insert(token('tok_1', { tokenHash: 'same' }));
    await expect(repository.insert(token('tok_2', { tokenHash: 'same' }))).rejects.toThrow();
    expect((await repository.list()).map((row) => row.id)).toEqual(['tok_1']);
  });

  it('lists every token by id, those of one user, or the operator tokens', async () => {
    const repository = createTokensRepository(state());
    await repository.insert(token('tok_c', { userId: 'usr_a' }));
    await repository.insert(token('tok_a'));
    await repository.insert(token('tok_b', { userId: 'usr_a', revokedAt: at(5) }));
    await repository.insert(token('tok_d', { userId: 'usr_b' }));
    const ids = (rows: { id: string }[]) => rows.map((row) => row.id);
    expect(ids(await repository.list())).toEqual(['tok_a', 'tok_b', 'tok_c', 'tok_d']);
    expect(ids(await repository.list('usr_a'))).toEqual(['tok_b', 'tok_c']);
    expect(ids(await repository.list(null))).toEqual(['tok_a']);
    expect(await repository.list('usr_none')).toEqual([]);
  });

  it('finds an active token by its hash, with its user’s current role and scope tags', async () => {
    const repository = createTokensRepository(state());
    await addUser(state(), 'usr_a', 'manager', ['blue', 'red']);
    await addUser(state(), 'usr_b', 'owner', null);
    await repository.insert(token('tok_operator', { role: 'owner', scope: 'write' }));
    await repository.insert(token('tok_a', { userId: 'usr_a', tags: ['blue'] }));
    await repository.insert(token('tok_b', { userId: 'usr_b' }));
    await repository.insert(token('tok_gone', { userId: 'usr_gone' }));
    await repository.insert(token('tok_revoked', { revokedAt: at(1) }));

    expect(await repository.findActiveByHash('hash-tok_operator')).toEqual({
      token: { ...token('tok_operator', { role: 'owner', scope: 'write' }), lastUsedAt: null, revokedAt: null },
      userRole: null,
      userScopeTags: null,
    });
    const ofA = await repository.findActiveByHash('hash-tok_a');
    expect(ofA).toMatchObject({ token: { id: 'tok_a', tags: ['blue'] }, userRole: 'manager' });
    expect(JSON.parse(ofA!.userScopeTags!)).toEqual(['blue', 'red']);
    expect(await repository.findActiveByHash('hash-tok_b')).toMatchObject({
      token: { id: 'tok_b' },
      userRole: 'owner',
      userScopeTags: null,
    });
    // A user gone: refused by the service.
    expect(await repository.findActiveByHash('hash-tok_gone')).toMatchObject({ userRole: 'missing' });
    expect(await repository.findActiveByHash('hash-tok_revoked')).toBeUndefined();
    expect(await repository.findActiveByHash('hash-none')).toBeUndefined();
  });

  it('reads a user’s current role and scope tags, parsed', async () => {
    const repository = createTokensRepository(state());
    await addUser(state(), 'usr_a', 'client', ['blue']);
    await addUser(state(), 'usr_b', 'viewer', null);
    expect(await repository.userOf('usr_a')).toEqual({ role: 'client', scopeTags: ['blue'] });
    expect(await repository.userOf('usr_b')).toEqual({ role: 'viewer', scopeTags: null });
    expect(await repository.userOf('usr_none')).toBeUndefined();
  });

  it('counts the active tokens and finds the active ones by id or name', async () => {
    const repository = createTokensRepository(state());
    expect(await repository.countActive()).toBe(0);
    await repository.insert(token('tok_1', { name: 'deploy' }));
    await repository.insert(token('tok_2', { name: 'deploy' }));
    await repository.insert(token('tok_3', { name: 'ci' }));
    await repository.insert(token('tok_4', { name: 'ci', revokedAt: at(1) }));
    expect(await repository.countActive()).toBe(3);
    const ids = (rows: { id: string }[]) => rows.map((row) => row.id).sort();
    expect(ids(await repository.findByIdOrName('deploy'))).toEqual(['tok_1', 'tok_2']);
    expect(ids(await repository.findByIdOrName('ci'))).toEqual(['tok_3']);
    expect(ids(await repository.findByIdOrName('tok_2'))).toEqual(['tok_2']);
    expect(await repository.findByIdOrName('tok_4')).toEqual([]);
    expect(await repository.findByIdOrName('nothing')).toEqual([]);
  });

  it('writes when a token was last used', async () => {
    const repository = createTokensRepository(state());
    await repository.insert(token('tok_1'));
    await repository.markUsed('tok_1', at(60_001));
    expect(await repository.findById('tok_1')).toMatchObject({ lastUsedAt: at(60_001) });
    await repository.markUsed('tok_none', at(60_002));
    expect(await repository.list()).toHaveLength(1);
  });

  it('revokes a token only while it is active, and answers it as written', async () => {
    const repository = createTokensRepository(state());
    await repository.insert(token('tok_1'));
    await repository.insert(token('tok_2'));
    expect(await repository.revoke('tok_1', at(1_000))).toEqual({
      ...token('tok_1'),
      lastUsedAt: null,
      revokedAt: at(1_000),
    });
    // Revoked already (by another request or process meanwhile): nothing written, nothing answered.
    expect(await repository.revoke('tok_1', at(2_000))).toBeUndefined();
    expect(await repository.revoke('tok_none', at(2_000))).toBeUndefined();
    expect(await repository.findById('tok_1')).toMatchObject({ revokedAt: at(1_000) });
    expect(await repository.findById('tok_2')).toMatchObject({ revokedAt: null });
    expect(await repository.findActiveByHash('hash-tok_1')).toBeUndefined();
    expect(await repository.countActive()).toBe(1);
  });

  it('tells whether another connection wrote (SQLite’s data_version), or nothing on PostgreSQL', async () => {
    const repository = createTokensRepository(state());
    const version = await repository.dataVersion();
    if (dialect === 'postgres') expect(version).toBeUndefined();
    else {
      expect(typeof version).toBe('number');
      // Its own writes do not change it (test/http/auth-rate-limit.test.ts writes from another connection).
      await repository.insert(token('tok_1'));
      expect(await repository.dataVersion()).toBe(version);
    }
  });
});
