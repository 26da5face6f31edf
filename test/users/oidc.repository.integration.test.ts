import { describe, expect, it } from 'vitest';
import { createOidcRepository } from '../../src/users/oidc.repository.js';
import { createUsersRepository } from '../../src/users/users.repository.js';
import { dialects, stateDatabaseFor } from '../support/dialects.js';
import { userRow } from './user-rows.js';

/** The users' single sign-on identities on both dialects (issue 34, docs/design/cluster-state.md). */
const ISSUER = 'https://idp.example';

describe.each(dialects)('the single sign-on repository on %s', (dialect) => {
  const state = stateDatabaseFor(dialect, 'oidc-repository');

  it('links a user to an identity once, and finds them by it', async () => {
    const users = createUsersRepository(state());
    const oidc = createOidcRepository(state());
    await users.insertUser(userRow('usr_ada', { username: 'ada@agency.example' }));
    await users.insertUser(userRow('usr_bob', { username: 'bob@agency.example' }));
    expect(await oidc.findByUsername('ada@agency.example')).toMatchObject({ id: 'usr_ada', oidcIssuer: null });
    expect(await oidc.findByIdentity(ISSUER, 'sub-ada')).toBeUndefined();

    expect(await oidc.link('usr_ada', ISSUER, 'sub-ada')).toBe(true);
    expect(await oidc.findByIdentity(ISSUER, 'sub-ada')).toMatchObject({
      id: 'usr_ada',
      oidcIssuer: ISSUER,
      oidcSubject: 'sub-ada',
    });
    expect(await oidc.findByIdentity('https://other.example', 'sub-ada')).toBeUndefined();
    // Linked already (to this identity or another), or gone: not linked again.
    expect(await oidc.link('usr_ada', ISSUER, 'sub-other')).toBe(false);
    expect(await oidc.link('usr_none', ISSUER, 'sub-none')).toBe(false);
    expect((await oidc.findByUsername('ada@agency.example'))?.oidcSubject).toBe('sub-ada');
    expect(await oidc.findByUsername('nobody@agency.example')).toBeUndefined();
  });

  it('refuses a second user of one identity', async () => {
    const users = createUsersRepository(state());
    const oidc = createOidcRepository(state());
    await users.insertUser(userRow('usr_ada'));
    await users.insertUser(userRow('usr_bob'));
    expect(await oidc.link('usr_ada', ISSUER, 'sub-1')).toBe(true);
    await expect(oidc.link('usr_bob', ISSUER, 'sub-1')).rejects.toThrow();
    expect(await oidc.findByIdentity(ISSUER, 'sub-1')).toMatchObject({ id: 'usr_ada' });
    expect(await oidc.link('usr_bob', ISSUER, 'sub-2')).toBe(true);
  });
});
