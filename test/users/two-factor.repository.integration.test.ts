import { describe, expect, it } from 'vitest';
import { createTwoFactorRepository } from '../../src/users/two-factor.repository.js';
import { createUsersRepository } from '../../src/users/users.repository.js';
import type { RecoveryCodeRow } from '../../src/users/users.table.js';
import { dialects, stateDatabaseFor } from '../support/dialects.js';
import { at, sessionRow, userRow } from './user-rows.js';

/**
 * Two-factor state and the session list on both dialects (issue 34, docs/design/cluster-state.md): one
 * test body on SQLite `:memory:` and on a database of the run's PostgreSQL cluster.
 */
const codes = (userId: string, ...hashes: string[]): RecoveryCodeRow[] =>
  hashes.map((codeHash, i) => ({
    id: `rcv_${userId}_${codeHash}_${i}`,
    userId,
    codeHash,
    createdAt: at(0),
    usedAt: null,
  }));

describe.each(dialects)('the two-factor repository on %s', (dialect) => {
  const state = stateDatabaseFor(dialect, 'two-factor-repository');
  const setUp = async () => {
    const users = createUsersRepository(state());
    await users.insertUser(userRow('usr_ada'));
    await users.insertUser(userRow('usr_bob'));
    return { users, twoFactor: createTwoFactorRepository(state()) };
  };

  it('keeps a pending secret while two-factor is off, and turns it on with that secret and its recovery codes', async () => {
    const { users, twoFactor } = await setUp();
    expect(await twoFactor.setPendingSecret('usr_ada', 'sealed-1')).toBe(true);
    expect(await twoFactor.setPendingSecret('usr_ada', 'sealed-2')).toBe(true);
    expect(await twoFactor.setPendingSecret('usr_none', 'sealed-1')).toBe(false);
    // Not the pending secret any more (begun again meanwhile): nothing written.
    expect(await twoFactor.enable('usr_ada', 'sealed-1', 100, at(1_000), codes('usr_ada', 'a', 'b'))).toBe(false);
    expect(await twoFactor.recoveryCodesLeft('usr_ada')).toBe(0);
    expect(await twoFactor.enable('usr_ada', 'sealed-2', 100, at(1_000), codes('usr_ada', 'a', 'b'))).toBe(true);
    expect(await users.findById('usr_ada')).toMatchObject({
      totpSecret: 'sealed-2',
      totpPendingSecret: null,
      totpEnabledAt: at(1_000),
      totpLastStep: 100,
    });
    expect(await twoFactor.recoveryCodesLeft('usr_ada')).toBe(2);
    // On already: no other enrolment begins, and the confirmed one is not written again.
    expect(await twoFactor.setPendingSecret('usr_ada', 'sealed-3')).toBe(false);
    expect(await twoFactor.enable('usr_ada', 'sealed-2', 101, at(2_000), codes('usr_ada', 'c'))).toBe(false);
    expect(await users.findById('usr_ada')).toMatchObject({ totpPendingSecret: null, totpLastStep: 100 });
    expect(await twoFactor.useRecoveryCode('usr_ada', 'a', at(3_000))).toBe(true);
    expect(await twoFactor.useRecoveryCode('usr_ada', 'c', at(3_000))).toBe(false);
  });

  it('enables once when two requests confirm the same enrolment at once: the first one’s codes stay', async () => {
    const { twoFactor } = await setUp();
    await twoFactor.setPendingSecret('usr_ada', 'sealed-1');
    const outcomes = await Promise.all([
      twoFactor.enable('usr_ada', 'sealed-1', 100, at(1_000), codes('usr_ada', 'first-1', 'first-2')),
      twoFactor.enable('usr_ada', 'sealed-1', 100, at(1_000), codes('usr_ada', 'second-1', 'second-2')),
    ]);
    expect(outcomes.toSorted()).toEqual([false, true]);
    const kept = outcomes[0] ? 'first' : 'second';
    const lost = outcomes[0] ? 'second' : 'first';
    expect(await twoFactor.useRecoveryCode('usr_ada', `${lost}-1`, at(2_000))).toBe(false);
    expect(await twoFactor.useRecoveryCode('usr_ada', `${kept}-1`, at(2_000))).toBe(true);
    expect(await twoFactor.recoveryCodesLeft('usr_ada')).toBe(1);
  });

  it('turns two-factor off with its secrets and codes, for that user only', async () => {
    const { users, twoFactor } = await setUp();
    for (const id of ['usr_ada', 'usr_bob']) {
      await twoFactor.setPendingSecret(id, 'sealed');
      await twoFactor.enable(id, 'sealed', 100, at(1_000), codes(id, 'a', 'b'));
    }
    await twoFactor.disable('usr_ada');
    expect(await users.findById('usr_ada')).toMatchObject({
      totpSecret: null,
      totpPendingSecret: null,
      totpEnabledAt: null,
      totpLastStep: null,
    });
    expect(await twoFactor.recoveryCodesLeft('usr_ada')).toBe(0);
    expect(await twoFactor.recoveryCodesLeft('usr_bob')).toBe(2);
    expect((await users.findById('usr_bob'))?.totpSecret).toBe('sealed');
  });

  it('accepts a time step only after the last one taken: a replay, or two requests with one code, take it once', async () => {
    const { users, twoFactor } = await setUp();
    expect(await twoFactor.takeStep('usr_ada', 100)).toBe(true);
    expect(await twoFactor.takeStep('usr_ada', 100)).toBe(false);
    expect(await twoFactor.takeStep('usr_ada', 99)).toBe(false);
    expect(await twoFactor.takeStep('usr_ada', 102)).toBe(true);
    expect(await twoFactor.takeStep('usr_none', 200)).toBe(false);
    const racing = await Promise.all([twoFactor.takeStep('usr_ada', 103), twoFactor.takeStep('usr_ada', 103)]);
    expect(racing.toSorted()).toEqual([false, true]);
    expect((await users.findById('usr_ada'))?.totpLastStep).toBe(103);
  });

  it('replaces the recovery codes, each usable once by its own user', async () => {
    const { twoFactor } = await setUp();
    await twoFactor.replaceRecoveryCodes('usr_ada', codes('usr_ada', 'a', 'b', 'c'));
    await twoFactor.replaceRecoveryCodes('usr_bob', codes('usr_bob', 'x'));
    expect(await twoFactor.useRecoveryCode('usr_ada', 'x', at(1_000))).toBe(false);
    expect(await twoFactor.useRecoveryCode('usr_ada', 'a', at(1_000))).toBe(true);
    expect(await twoFactor.useRecoveryCode('usr_ada', 'a', at(2_000))).toBe(false);
    expect(await twoFactor.recoveryCodesLeft('usr_ada')).toBe(2);
    await twoFactor.replaceRecoveryCodes('usr_ada', codes('usr_ada', 'd'));
    expect(await twoFactor.useRecoveryCode('usr_ada', 'b', at(3_000))).toBe(false);
    expect(await twoFactor.recoveryCodesLeft('usr_ada')).toBe(1);
    await twoFactor.replaceRecoveryCodes('usr_ada', []);
    expect(await twoFactor.recoveryCodesLeft('usr_ada')).toBe(0);
    expect(await twoFactor.recoveryCodesLeft('usr_bob')).toBe(1);
    const racing = await Promise.all([
      twoFactor.useRecoveryCode('usr_bob', 'x', at(4_000)),
      twoFactor.useRecoveryCode('usr_bob', 'x', at(4_000)),
    ]);
    expect(racing.toSorted()).toEqual([false, true]);
  });

  it('keeps the owners’ policy in one row: not required until written, then as last written', async () => {
    const { twoFactor } = await setUp();
    expect(await twoFactor.readRequired()).toBe(false);
    await twoFactor.writeRequired(true, at(1_000), 'user:usr_ada');
    expect(await twoFactor.readRequired()).toBe(true);
    await twoFactor.writeRequired(false, at(2_000), null);
    expect(await twoFactor.readRequired()).toBe(false);
    await twoFactor.writeRequired(true, at(3_000), 'token:tok_1');
    expect(await twoFactor.readRequired()).toBe(true);
  });

  it('lists a user’s live sessions, the most recently seen first, and ends one of theirs only', async () => {
    const { users, twoFactor } = await setUp();
    await users.insertSession(sessionRow('ses_a', 'usr_ada', { lastSeenAt: at(1_000), userAgent: null }));
    await users.insertSession(sessionRow('ses_c', 'usr_ada', { lastSeenAt: at(3_000) }));
    await users.insertSession(sessionRow('ses_b', 'usr_ada', { lastSeenAt: at(3_000) }));
    await users.insertSession(sessionRow('ses_old', 'usr_ada', { expiresAt: at(500) }));
    await users.insertSession(sessionRow('ses_bob', 'usr_bob'));
    expect(await twoFactor.sessionsOf('usr_ada', at(1_000))).toEqual([
      {
        id: 'ses_b',
        createdAt: at(0),
        lastSeenAt: at(3_000),
        expiresAt: at(60_000),
        address: '203.0.113.10',
        userAgent: 'Firefox',
      },
      expect.objectContaining({ id: 'ses_c' }),
      expect.objectContaining({ id: 'ses_a', userAgent: null }),
    ]);
    expect(await twoFactor.deleteSessionOf('usr_ada', 'ses_bob')).toBe(false);
    expect(await twoFactor.deleteSessionOf('usr_ada', 'ses_c')).toBe(true);
    expect(await twoFactor.deleteSessionOf('usr_ada', 'ses_c')).toBe(false);
    expect((await twoFactor.sessionsOf('usr_ada', at(1_000))).map((session) => session.id)).toEqual(['ses_b', 'ses_a']);
    expect((await twoFactor.sessionsOf('usr_bob', at(1_000))).map((session) => session.id)).toEqual(['ses_bob']);
  });
});
