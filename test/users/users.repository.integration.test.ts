import { describe, expect, expectTypeOf, it } from 'vitest';
import type * as pg from '../../src/users/users.pg-table.js';
import { createUsersRepository } from '../../src/users/users.repository.js';
import type * as sqlite from '../../src/users/users.table.js';
import type { SessionRow } from '../../src/users/users.table.js';
import { dialects, stateDatabaseFor, type RowsOf } from '../support/dialects.js';
import { at, sessionRow, userRow } from './user-rows.js';

/**
 * Users and their sessions on both dialects (issue 34, docs/design/cluster-state.md): one test body on
 * SQLite `:memory:` and on a database of the run's PostgreSQL cluster (test/support/dialects.ts).
 */
describe('the users tables', () => {
  it('have the same row types on both dialects, so one repository body reads and writes both', () => {
    expectTypeOf<RowsOf<typeof pg.users>>().toEqualTypeOf<RowsOf<typeof sqlite.users>>();
    expectTypeOf<RowsOf<typeof pg.sessions>>().toEqualTypeOf<RowsOf<typeof sqlite.sessions>>();
    expectTypeOf<RowsOf<typeof pg.recoveryCodes>>().toEqualTypeOf<RowsOf<typeof sqlite.recoveryCodes>>();
    expectTypeOf<RowsOf<typeof pg.twoFactorSettings>>().toEqualTypeOf<RowsOf<typeof sqlite.twoFactorSettings>>();
  });
});

describe.each(dialects)('the users repository on %s', (dialect) => {
  const state = stateDatabaseFor(dialect, 'users-repository');

  it('writes a user as given and finds it by id and by name; its scope tags a JSON array, its dates to the millisecond', async () => {
    const users = createUsersRepository(state());
    const ada = userRow('usr_ada', { role: 'manager', scopeTags: ['team-x', 'client:acme'], createdAt: at(123) });
    await users.insertUser(ada);
    await users.insertUser(userRow('usr_bob'));
    expect(await users.findById('usr_ada')).toEqual(ada);
    expect(await users.findByUsername('ada')).toEqual(ada);
    expect(await users.findByUsername('bob')).toMatchObject({ id: 'usr_bob', scopeTags: null });
    expect(await users.findById('usr_none')).toBeUndefined();
    expect(await users.findByUsername('nobody')).toBeUndefined();
    expect((await users.listUsers()).map((user) => user.id)).toEqual(['usr_ada', 'usr_bob']);
    expect(await users.countUsers()).toBe(2);
  });

  it('refuses a second user of the same name', async () => {
    const users = createUsersRepository(state());
    await users.insertUser(userRow('usr_1', { username: 'ada' }));
    await expect(users.insertUser(userRow('usr_2', { username: 'ada' }))).rejects.toThrow();
    expect(await users.countUsers()).toBe(1);
  });

  it('changes a scope, a password and the last sign-in of one user only', async () => {
    const users = createUsersRepository(state());
    await users.insertUser(userRow('usr_ada'));
    await users.insertUser(userRow('usr_bob'));
    await users.setScopeTags('usr_ada', ['team-x']);
    await users.setPassword('usr_ada', 'scrypt$new', at(5_000));
    await users.markSignedIn('usr_ada', at(6_000));
    expect(await users.findById('usr_ada')).toMatchObject({
      scopeTags: ['team-x'],
      passwordHash: 'scrypt$new',
      passwordChangedAt: at(5_000),
      lastSignedInAt: at(6_000),
    });
    await users.setScopeTags('usr_ada', null);
    expect((await users.findById('usr_ada'))?.scopeTags).toBeNull();
    expect(await users.findById('usr_bob')).toEqual(userRow('usr_bob'));
  });

  it('changes a role unless that leaves no owner', async () => {
    const users = createUsersRepository(state());
    await users.insertUser(userRow('usr_olga'));
    await users.insertUser(userRow('usr_vera', { role: 'viewer' }));
    expect(await users.setRole('usr_olga', 'manager')).toBe('last-owner');
    expect(await users.setRole('usr_vera', 'manager')).toBe('done');
    expect(await users.setRole('usr_vera', 'owner')).toBe('done');
    expect(await users.setRole('usr_olga', 'viewer')).toBe('done');
    expect(await users.setRole('usr_vera', 'client')).toBe('last-owner');
    expect(await users.setRole('usr_none', 'viewer')).toBe('missing');
    expect(await users.setRole('usr_none', 'owner')).toBe('missing');
    expect((await users.listUsers()).map((user) => [user.id, user.role])).toEqual([
      ['usr_olga', 'viewer'],
      ['usr_vera', 'owner'],
    ]);
  });

  it('leaves one owner when two owners demote each other at once', async () => {
    const users = createUsersRepository(state());
    await users.insertUser(userRow('usr_olga'));
    await users.insertUser(userRow('usr_omar'));
    const outcomes = await Promise.all([users.setRole('usr_olga', 'manager'), users.setRole('usr_omar', 'manager')]);
    expect(outcomes.toSorted()).toEqual(['done', 'last-owner']);
    expect((await users.listUsers()).filter((user) => user.role === 'owner')).toHaveLength(1);
  });

  it('deletes a user with their sessions, answering the sessions’ ids; never the last owner', async () => {
    const users = createUsersRepository(state());
    await users.insertUser(userRow('usr_olga'));
    await users.insertUser(userRow('usr_vera', { role: 'viewer' }));
    await users.insertSession(sessionRow('ses_1', 'usr_vera'));
    await users.insertSession(sessionRow('ses_2', 'usr_vera'));
    await users.insertSession(sessionRow('ses_3', 'usr_olga'));
    expect(await users.deleteUser('usr_olga')).toEqual({ outcome: 'last-owner', sessionIds: [] });
    const deleted = await users.deleteUser('usr_vera');
    expect({ ...deleted, sessionIds: deleted.sessionIds.toSorted() }).toEqual({
      outcome: 'done',
      sessionIds: ['ses_1', 'ses_2'],
    });
    expect(await users.deleteUser('usr_vera')).toEqual({ outcome: 'missing', sessionIds: [] });
    expect(await users.findById('usr_vera')).toBeUndefined();
    expect(await users.isSessionLive('ses_1', at(0))).toBe(false);
    expect(await users.isSessionLive('ses_3', at(0))).toBe(true);
  });

  it('finds a live session by its token hash with its user; an expired one or another hash finds nothing', async () => {
    const users = createUsersRepository(state());
    const ada = userRow('usr_ada', { role: 'viewer', scopeTags: ['a'] });
    await users.insertUser(ada);
    const session = sessionRow('ses_1', 'usr_ada', { signInMethod: 'oidc', expiresAt: at(60_000) });
    await users.insertSession(session);
    expect(await users.findSession('hash-of-ses_1', at(59_999))).toEqual({ session, user: ada });
    expect(await users.findSession('hash-of-ses_1', at(60_000))).toBeUndefined();
    expect(await users.findSession('another-hash', at(0))).toBeUndefined();
    // Written without a method, a session was opened by a password.
    const { signInMethod: _, ...withoutMethod } = sessionRow('ses_2', 'usr_ada');
    await users.insertSession(withoutMethod as SessionRow);
    expect((await users.findSession('hash-of-ses_2', at(0)))?.session.signInMethod).toBe('password');
  });

  it('refuses a session of no user, and a second session of the same token hash', async () => {
    const users = createUsersRepository(state());
    await users.insertUser(userRow('usr_ada'));
    await expect(users.insertSession(sessionRow('ses_1', 'usr_none'))).rejects.toThrow();
    await users.insertSession(sessionRow('ses_1', 'usr_ada'));
    await expect(users.insertSession(sessionRow('ses_2', 'usr_ada', { tokenHash: 'hash-of-ses_1' }))).rejects.toThrow();
    expect(await users.isSessionLive('ses_2', at(0))).toBe(false);
  });

  it('moves a session’s idle expiry on, and ends one, some or all of a user’s sessions', async () => {
    const users = createUsersRepository(state());
    await users.insertUser(userRow('usr_ada'));
    await users.insertUser(userRow('usr_bob'));
    for (const id of ['ses_1', 'ses_2', 'ses_3']) await users.insertSession(sessionRow(id, 'usr_ada'));
    await users.insertSession(sessionRow('ses_bob', 'usr_bob'));

    await users.touchSession('ses_1', at(30_000), at(90_000));
    expect((await users.findSession('hash-of-ses_1', at(70_000)))?.session).toMatchObject({
      lastSeenAt: at(30_000),
      expiresAt: at(90_000),
    });
    expect(await users.isSessionLive('ses_1', at(70_000))).toBe(true);
    expect(await users.isSessionLive('ses_2', at(70_000))).toBe(false);

    expect(await users.deleteOtherSessionsOf('usr_ada', 'ses_1')).toEqual(expect.arrayContaining(['ses_2', 'ses_3']));
    expect(await users.deleteOtherSessionsOf('usr_ada', 'ses_1')).toEqual([]);
    expect(await users.isSessionLive('ses_1', at(0))).toBe(true);
    await users.deleteSession('ses_1');
    expect(await users.isSessionLive('ses_1', at(0))).toBe(false);

    await users.insertSession(sessionRow('ses_4', 'usr_ada'));
    expect(await users.deleteSessionsOf('usr_ada')).toEqual(['ses_4']);
    expect(await users.deleteSessionsOf('usr_ada')).toEqual([]);
    expect(await users.isSessionLive('ses_bob', at(0))).toBe(true);
  });

  it('deletes the sessions expired by now, and says how many', async () => {
    const users = createUsersRepository(state());
    await users.insertUser(userRow('usr_ada'));
    await users.insertSession(sessionRow('ses_1', 'usr_ada', { expiresAt: at(1_000) }));
    await users.insertSession(sessionRow('ses_2', 'usr_ada', { expiresAt: at(2_000) }));
    await users.insertSession(sessionRow('ses_3', 'usr_ada', { expiresAt: at(3_000) }));
    expect(await users.deleteExpiredSessions(at(2_000))).toBe(2);
    expect(await users.deleteExpiredSessions(at(2_000))).toBe(0);
    expect(await users.isSessionLive('ses_3', at(2_000))).toBe(true);
  });
});
