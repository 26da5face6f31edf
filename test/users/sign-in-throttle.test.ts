import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { sqliteStateOf } from '../../src/db/state-db.js';
import { createFakeClock } from '../../src/shared/clock.js';
import { isProblem } from '../../src/shared/errors.js';
import { createLoggedEvents, createLogger } from '../../src/shared/logger.js';
import { createUsersRepository, createUsersService, usersProblems } from '../../src/users/index.js';
import { createPasswordHasher, type Derive, type ScryptParameters } from '../../src/users/passwords.js';

const PASSWORD = 'correct horse battery staple';
const A = '203.0.113.10';
const B = '198.51.100.20';

/** The users service with a cheap, counting stand-in for scrypt (same parameters, same calls). */
function setUp() {
  const clock = createFakeClock(new Date('2026-03-01T10:00:00Z'));
  const database = openDatabase(':memory:');
  const hashed: { password: string; parameters: ScryptParameters }[] = [];
  const derive: Derive = async (password, salt, parameters) => {
    hashed.push({ password, parameters });
    await new Promise((resolve) => setImmediate(resolve));
    return createHash('sha256')
      .update(`${parameters.N}/${parameters.r}/${parameters.p}:${password}`)
      .update(salt)
      .digest();
  };
  const users = createUsersService({
    repository: createUsersRepository(sqliteStateOf(database)),
    clock,
    events: createLoggedEvents(createLogger({ level: 'silent' })),
    hasher: createPasswordHasher({ derive, maxWaiting: 1000 }),
  });
  return { clock, database, hashed, users };
}

const outcome = (promise: Promise<unknown>) =>
  promise.then(
    () => 'signed in',
    (error: unknown) =>
      isProblem(
        error,
        usersProblems.signInFailed,
        usersProblems.signInLimited,
        usersProblems.busy,
        usersProblems.invalid,
      )
        ? error.problem.name
        : Promise.reject(error),
  );

describe('sign-in throttling', () => {
  let t: ReturnType<typeof setUp>;
  let database: DatabaseHandle;
  beforeEach(async () => {
    t = setUp();
    database = t.database;
    await t.users.create('alice', PASSWORD);
    await t.users.create('bob', PASSWORD);
    t.hashed.length = 0;
  });
  afterEach(() => database.close());

  it('counts attempts before hashing: of 120 parallel wrong passwords only the first 5 are hashed', async () => {
    const results = await Promise.all(
      Array.from({ length: 120 }, (_, i) => outcome(t.users.signIn('alice', `wrong password ${i}`, A))),
    );
    expect(results.filter((r) => r === 'sign-in-failed')).toHaveLength(5);
    expect(results.filter((r) => r === 'sign-in-rate-limited')).toHaveLength(115);
    expect(t.hashed).toHaveLength(5);
  });

  it('never delays the real user at another address, nor another account at the same address', async () => {
    for (let i = 0; i < 5; i++)
      expect(await outcome(t.users.signIn('alice', `wrong ${i} password`, A))).toBe('sign-in-failed');
    expect(await outcome(t.users.signIn('alice', PASSWORD, A))).toBe('sign-in-rate-limited');
    // The real alice, elsewhere, at once: in.
    expect(await outcome(t.users.signIn('alice', PASSWORD, B))).toBe('signed in');
    // Bob at A is not alice at A.
    expect(await outcome(t.users.signIn('bob', PASSWORD, A))).toBe('signed in');
  });

  it('backs off exponentially per account and address: 1 s, 2 s, 4 s … up to 15 minutes', async () => {
    const wrong = () => outcome(t.users.signIn('alice', 'not the password!', A));
    for (let i = 0; i < 5; i++) expect(await wrong()).toBe('sign-in-failed');
    const waits: number[] = [];
    for (let i = 0; i < 14; i++) {
      const refused = await t.users.signIn('alice', 'not the password!', A).catch((error: unknown) => error);
      expect(isProblem(refused, usersProblems.signInLimited)).toBe(true);
      const wait = (refused as { extensions: { retryAfter: number } }).extensions.retryAfter;
      waits.push(wait);
      t.clock.advance(wait * 1000);
      expect(await wrong()).toBe('sign-in-failed');
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900, 900, 900]);
    // The right password is refused too while waiting, then let in, and that clears the backoff.
    expect(await outcome(t.users.signIn('alice', PASSWORD, A))).toBe('sign-in-rate-limited');
    t.clock.advance(900_000);
    expect(await outcome(t.users.signIn('alice', PASSWORD, A))).toBe('signed in');
    for (let i = 0; i < 5; i++) expect(await wrong()).toBe('sign-in-failed');
  });

  it('limits one address over every account more loosely (30), and the other addresses not at all', async () => {
    for (let i = 0; i < 30; i++)
      expect(await outcome(t.users.signIn(`user${i}`, 'some password or other', A))).toBe('sign-in-failed');
    expect(await outcome(t.users.signIn('someone-new', 'some password or other', A))).toBe('sign-in-rate-limited');
    expect(await outcome(t.users.signIn('alice', PASSWORD, A))).toBe('sign-in-rate-limited');
    expect(await outcome(t.users.signIn('alice', PASSWORD, B))).toBe('signed in');
    t.clock.advance(1000);
    expect(await outcome(t.users.signIn('alice', PASSWORD, A))).toBe('signed in');
  });

  it('hashes as much for an unknown user name as for a wrong password', async () => {
    expect(await outcome(t.users.signIn('alice', 'a wrong password', A))).toBe('sign-in-failed');
    expect(await outcome(t.users.signIn('nobody-at-all', 'a wrong password', A))).toBe('sign-in-failed');
    expect(await outcome(t.users.signIn('not a valid name!', 'a wrong password', A))).toBe('sign-in-failed');
    expect(await outcome(t.users.signIn('alice', 'x'.repeat(5000), A))).toBe('sign-in-failed');
    expect(t.hashed.map((h) => h.parameters)).toEqual(Array(4).fill({ N: 2 ** 15, r: 8, p: 1 }));
    expect(t.hashed.map((h) => h.password.length)).toEqual([16, 16, 16, 1024]);
  });

  it('does not count an attempt the full hashing pool refused', async () => {
    const held: (() => void)[] = [];
    const slow: Derive = async (password, salt) => {
      await new Promise<void>((resolve) => held.push(resolve));
      return createHash('sha256').update(password).update(salt).digest();
    };
    const users = createUsersService({
      repository: createUsersRepository(sqliteStateOf(database)),
      clock: t.clock,
      events: createLoggedEvents(createLogger({ level: 'silent' })),
      hasher: createPasswordHasher({ derive: slow, concurrency: 1, maxWaiting: 1 }),
    });
    const running = [
      outcome(users.signIn('alice', 'wrong one please', B)),
      outcome(users.signIn('bob', 'wrong one please', B)),
    ];
    await new Promise((resolve) => setImmediate(resolve));
    for (let i = 0; i < 10; i++)
      expect(await outcome(users.signIn('alice', 'wrong one please', A))).toBe('sign-in-busy');
    let finished = false;
    const both = Promise.all(running).finally(() => (finished = true));
    while (!finished) {
      held.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await both).toEqual(['sign-in-failed', 'sign-in-failed']);
    // The ten refusals left alice at A with her five attempts.
    const after: string[] = [];
    for (let i = 0; i < 6; i++) {
      const attempt = outcome(users.signIn('alice', 'wrong one please', A));
      await new Promise((resolve) => setImmediate(resolve));
      held.shift()?.();
      after.push(await attempt);
    }
    expect(after).toEqual([...Array(5).fill('sign-in-failed'), 'sign-in-rate-limited']);
  });

  it('refuses control characters in user names: creating one, and signing in as one', async () => {
    for (const name of ['carol\n', '\tcarol', 'car\u0000ol', 'carol\u202e', 'carol\u0085'])
      expect(await outcome(t.users.create(name, PASSWORD)), JSON.stringify(name)).toBe('user-invalid');
    expect((await t.users.list()).map((u) => u.username)).toEqual(['alice', 'bob']);
    expect(await outcome(t.users.signIn('alice\n', PASSWORD, A))).toBe('sign-in-failed');
    expect(await outcome(t.users.resetPassword('alice\r\n'))).toBe('user-invalid');
  });
});
