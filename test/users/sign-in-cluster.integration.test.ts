import { createHash, randomBytes } from 'node:crypto';
import { generateSync } from 'otplib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openStateDatabase, type StateDatabase } from '../../src/db/state-db.js';
import { authFailureLimiterFor } from '../../src/http/auth-rate-limit.js';
import { createFakeClock } from '../../src/shared/clock.js';
import { isProblem } from '../../src/shared/errors.js';
import { createLoggedEvents, createLogger } from '../../src/shared/logger.js';
import { createSecretBox } from '../../src/shared/secret-box.js';
import {
  createOidcSignIn,
  createTwoFactorRepository,
  createUsersRepository,
  createUsersService,
  OIDC_CALLBACK_PATH,
  oidcProblems,
  twoFactorProblems,
  usersProblems,
} from '../../src/users/index.js';
import { createPasswordHasher, type Derive } from '../../src/users/passwords.js';
import { signInTicketsFor, type SignInTickets } from '../../src/users/sign-in-tickets.js';
import { postgresTestUrl } from '../support/dialects.js';
import { signInAtProvider, startOidcProvider, type TestOidcProvider } from '../support/oidc-provider.js';

/**
 * Sign-ins across a cluster's API processes (issue 34; docs/design/cluster-state.md, "Sign-in state"): two
 * "processes", A and B, each its own services and connections on one PostgreSQL database, as behind a
 * round-robin proxy. What one began the other finishes, once; the failure limits count both.
 */
const PASSWORD = 'correct horse battery staple';
const ADDRESS = '203.0.113.10';
const PUBLIC_URL = 'http://sitewarden.test';
const REDIRECT_URI = `${PUBLIC_URL}${OIDC_CALLBACK_PATH}`;

const clock = createFakeClock(new Date('2026-03-01T10:00:10Z'));
const secretKey = randomBytes(32);
let url: string;
let databases: StateDatabase[] = [];
let idp: TestOidcProvider;
/** Passwords hashed by either process (a cheap stand-in for scrypt). */
let hashed = 0;

beforeAll(async () => {
  url = await postgresTestUrl('sign-in-cluster');
  idp = await startOidcProvider({ redirectUri: REDIRECT_URI });
});
afterAll(async () => {
  await idp?.stop();
  await Promise.all(databases.map((database) => database.close()));
});
beforeEach(async () => {
  const state = databases[0] ?? (await openStateDatabase({ url, sqlitePath: '' }));
  databases = [state, databases[1] ?? (await openStateDatabase({ url, sqlitePath: '' }))];
  const { rows } = await state.db.execute<{ name: string }>(
    `select quote_ident(tablename) as name from pg_tables where schemaname = 'public'`,
  );
  await state.db.execute(`truncate ${rows.map((row) => row.name).join(', ')} restart identity cascade`);
  hashed = 0;
});

/** One API process: its own users service and single sign-on over its own connections to the database. */
function apiProcess(state: StateDatabase) {
  const events = createLoggedEvents(createLogger({ level: 'silent' }));
  const derive: Derive = async (password, salt) => {
    hashed++;
    await new Promise((resolve) => setImmediate(resolve));
    return createHash('sha256').update(password).update(salt).digest();
  };
  const users = createUsersService({
    repository: createUsersRepository(state),
    state,
    clock,
    events,
    hasher: createPasswordHasher({ derive, maxWaiting: 1000 }),
    twoFactorRepository: createTwoFactorRepository(state),
    secrets: createSecretBox(secretKey),
  });
  const oidc = createOidcSignIn({
    config: loadConfig({
      SITEWARDEN_OIDC_ISSUER: idp.issuer,
      SITEWARDEN_OIDC_CLIENT_ID: idp.clientId,
      SITEWARDEN_OIDC_CLIENT_SECRET: idp.clientSecret,
      SITEWARDEN_OIDC_ROLE_MAP: '*=viewer',
      SITEWARDEN_OIDC_ALLOWED_DOMAINS: 'agency.example',
      SITEWARDEN_OIDC_TIMEOUT_MS: '2000',
    }).oidc!,
    publicUrl: PUBLIC_URL,
    state,
    users,
    clock,
    events,
  });
  return { users, oidc };
}

const twoProcesses = () => [apiProcess(databases[0]!), apiProcess(databases[1]!)] as const;

const problemName = (promise: Promise<unknown>) =>
  promise.then(
    () => 'signed in',
    (error: unknown) =>
      isProblem(
        error,
        usersProblems.signInFailed,
        usersProblems.signInLimited,
        twoFactorProblems.signInExpired,
        twoFactorProblems.codeInvalid,
        oidcProblems.expired,
      )
        ? error.problem.name
        : Promise.reject(error),
  );

const rows = async (table: string) =>
  (await databases[0]!.db.execute<Record<string, unknown>>(`select * from ${table}`)).rows;

describe('single sign-on across API processes', () => {
  it('finishes on B a sign-on begun on A, and refuses the same callback replayed on A', async () => {
    idp.accounts.set('ada-sub', { email: 'ada@agency.example', email_verified: true });
    const [a, b] = twoProcesses();
    const { flowId, url: authorizationUrl } = await a.oidc.start('/updates');
    // The browser's flow id is not stored; its hash is. The PKCE verifier must be (for the token request).
    const [stored] = await rows('sign_in_tickets');
    expect(stored).toMatchObject({ kind: 'oidc-flow', id_hash: expect.not.stringContaining(flowId) });
    expect(stored!.value).toMatchObject({ codeVerifier: expect.any(String), next: '/updates' });

    const back = await signInAtProvider(authorizationUrl, 'ada-sub', REDIRECT_URI);
    const signedIn = await b.oidc.finish(flowId, back.search, ADDRESS);
    expect(signedIn).toMatchObject({ next: '/updates', role: 'viewer', session: { token: expect.any(String) } });
    expect(await rows('sign_in_tickets')).toEqual([]);
    expect(await problemName(a.oidc.finish(flowId, back.search, ADDRESS))).toBe('oidc-sign-in-expired');
  });

  it('lets one of two callbacks of one flow, at once on A and B, sign in', async () => {
    idp.accounts.set('bea-sub', { email: 'bea@agency.example', email_verified: true });
    const [a, b] = twoProcesses();
    const { flowId, url: authorizationUrl } = await a.oidc.start('/');
    const back = await signInAtProvider(authorizationUrl, 'bea-sub', REDIRECT_URI);
    const outcomes = await Promise.all([
      problemName(a.oidc.finish(flowId, back.search, ADDRESS)),
      problemName(b.oidc.finish(flowId, back.search, ADDRESS)),
    ]);
    expect(outcomes.sort()).toEqual(['oidc-sign-in-expired', 'signed in']);
  });

  it('refuses a flow past its ten minutes on the other process, and prunes it on a later start', async () => {
    const [a, b] = twoProcesses();
    const late = await a.oidc.start('/');
    clock.advance(10 * 60_000);
    expect(await problemName(b.oidc.finish(late.flowId, '?code=x&state=y', ADDRESS))).toBe('oidc-sign-in-expired');
    await a.oidc.start('/');
    clock.advance(10 * 60_000 + 1);
    await b.oidc.start('/'); // B's first write prunes A's second flow, expired a moment ago (the first went when refused).
    expect(await rows('sign_in_tickets')).toHaveLength(1);
  });
});

describe('sign-in tickets in the database', () => {
  it('keep the newest of a kind, the oldest forgotten every so many writes of a process, as a flood would need', async () => {
    const [a, b] = databases.map((state) =>
      signInTicketsFor<{ n: number }>(state, 'oidc-flow', clock, { maxTickets: 5, trimEvery: 4 }),
    ) as [SignInTickets<{ n: number }>, SignInTickets<{ n: number }>];
    const pending = signInTicketsFor<{ n: number }>(databases[0], 'pending-sign-in', clock, { maxTickets: 5 });
    await pending.put('pending', { n: 0 }, clock.now().getTime() + 60_000);
    for (let n = 1; n <= 8; n++) await (n % 2 ? a : b).put(`flow-${n}`, { n }, clock.now().getTime() + 60_000 + n);
    // Each process has written four: each trimmed to the newest five as it wrote its fourth.
    expect(await rows('sign_in_tickets')).toHaveLength(6);
    expect(await a.find('flow-3')).toBeUndefined();
    expect(await b.find('flow-4')).toEqual({ n: 4 });
    expect(await pending.find('pending')).toEqual({ n: 0 });
  });
});

describe('two-factor sign-in across API processes', () => {
  const totp = (secret: string, offsetSeconds = 0) =>
    generateSync({ secret, epoch: Math.floor(clock.now().getTime() / 1000) + offsetSeconds });

  /** Alice, with two-factor on (enrolled through A): her TOTP secret and recovery codes. */
  async function aliceWithTwoFactor(a: ReturnType<typeof apiProcess>) {
    const alice = await a.users.create('alice', PASSWORD);
    const { secret } = await a.users.twoFactor.begin(alice.id);
    const { recoveryCodes } = await a.users.twoFactor.confirm(alice.id, totp(secret));
    clock.advance(30_000); // past the step the confirmation used
    return { secret, recoveryCodes };
  }

  async function pendingToken(process: ReturnType<typeof apiProcess>) {
    const pending = await process.users.signIn('alice', PASSWORD, ADDRESS);
    if (!('twoFactor' in pending)) throw new Error('expected a pending sign-in');
    return pending.twoFactor.pendingToken;
  }

  it('takes on B the code of a password given on A, once', async () => {
    const [a, b] = twoProcesses();
    const { secret, recoveryCodes } = await aliceWithTwoFactor(a);
    const token = await pendingToken(a);
    const [stored] = await rows('sign_in_tickets');
    expect(stored).toMatchObject({ kind: 'pending-sign-in', id_hash: expect.not.stringContaining(token) });

    expect(await problemName(b.users.completeSignIn(token, '000000', ADDRESS))).toBe('two-factor-code-invalid');
    const session = await b.users.completeSignIn(token, totp(secret), ADDRESS);
    expect(session).toMatchObject({ factor: 'totp', token: expect.any(String) });
    expect(await problemName(a.users.completeSignIn(token, recoveryCodes[0]!, ADDRESS))).toBe(
      'two-factor-sign-in-expired',
    );
  });

  it('opens one session for two right codes sent at once to A and B', async () => {
    const [a, b] = twoProcesses();
    const { secret, recoveryCodes } = await aliceWithTwoFactor(a);
    const token = await pendingToken(b);
    const outcomes = await Promise.all([
      problemName(a.users.completeSignIn(token, totp(secret), ADDRESS)),
      problemName(b.users.completeSignIn(token, recoveryCodes[0]!, ADDRESS)),
    ]);
    expect(outcomes.sort()).toEqual(['signed in', 'two-factor-sign-in-expired']);
  });

  it('refuses a pending sign-in past its five minutes, and prunes it on a later write', async () => {
    const [a, b] = twoProcesses();
    const { secret } = await aliceWithTwoFactor(a);
    const token = await pendingToken(a);
    clock.advance(5 * 60_000);
    expect(await problemName(b.users.completeSignIn(token, totp(secret), ADDRESS))).toBe('two-factor-sign-in-expired');
    expect(await rows('sign_in_tickets')).toHaveLength(1);
    clock.advance(60_000);
    await pendingToken(b);
    expect((await rows('sign_in_tickets')).map((row) => new Date(String(row.expires_at)).getTime())).toEqual([
      clock.now().getTime() + 5 * 60_000,
    ]);
  });
});

describe('failure limits across API processes', () => {
  it('counts wrong passwords on A and B together: the sixth waits, whichever process it reaches', async () => {
    const [a, b] = twoProcesses();
    await a.users.create('alice', PASSWORD);
    hashed = 0;
    for (const process of [a, b, a, b, a])
      expect(await problemName(process.users.signIn('alice', 'wrong password', ADDRESS))).toBe('sign-in-failed');
    expect(await problemName(b.users.signIn('alice', PASSWORD, ADDRESS))).toBe('sign-in-rate-limited');
    expect(await problemName(a.users.signIn('alice', PASSWORD, ADDRESS))).toBe('sign-in-rate-limited');
    expect(hashed).toBe(5);
    clock.advance(1_000); // the first wait: one more try, on either
    expect(await problemName(b.users.signIn('alice', PASSWORD, ADDRESS))).toBe('signed in');
  });

  it('counts a burst spread over A and B before hashing: of 40 at once, 5 are hashed', async () => {
    const [a, b] = twoProcesses();
    await a.users.create('alice', PASSWORD);
    await a.users.create('bob', PASSWORD);
    hashed = 0;
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, (_, i) => problemName((i % 2 ? a : b).users.signIn('alice', `wrong ${i}`, ADDRESS))),
    );
    expect(outcomes.filter((outcome) => outcome === 'sign-in-failed')).toHaveLength(5);
    expect(outcomes.filter((outcome) => outcome === 'sign-in-rate-limited')).toHaveLength(35);
    expect(hashed).toBe(5);
    // A refused attempt gave back what it took of the address's count: another account there is not held up.
    expect(await problemName(a.users.signIn('bob', PASSWORD, ADDRESS))).toBe('signed in');
  });

  it('forgets an hour-old count and prunes its row on a later attempt', async () => {
    const [a, b] = twoProcesses();
    await a.users.create('alice', PASSWORD);
    for (let i = 0; i < 6; i++) await problemName(a.users.signIn('alice', 'wrong password', ADDRESS));
    clock.advance(60 * 60_000);
    await problemName(b.users.signIn('bob', 'wrong password', '198.51.100.20'));
    expect((await rows('sign_in_attempts')).map((row) => row.key).sort()).toEqual([
      '198.51.100.20',
      JSON.stringify(['198.51.100.20', 'bob']),
    ]);
    expect(await problemName(a.users.signIn('alice', PASSWORD, ADDRESS))).toBe('signed in');
  });

  it('counts failed API authentications of one address on A and B against one limit a minute', async () => {
    const [a, b] = [0, 1].map((i) => authFailureLimiterFor({ state: databases[i]!, limit: 5, clock }));
    const answers = [];
    for (const limiter of [a, b, a, b, a, b, a]) answers.push(await limiter!.countFailure(ADDRESS));
    expect(answers).toEqual([0, 0, 0, 0, 0, 60, 60]);
    expect(await b!.countFailure('198.51.100.20')).toBe(0);
    clock.advance(60_000);
    expect(await b!.countFailure(ADDRESS)).toBe(0);
    // That write pruned the windows that ended: the other address's row is gone.
    expect((await rows('auth_failures')).map((row) => row.address)).toEqual([ADDRESS]);
  });
});
