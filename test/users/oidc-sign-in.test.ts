import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { defaultConnectorZipPath } from '../../src/connector/connector-package.js';
import { createOidcSignIn, OIDC_CALLBACK_PATH } from '../../src/users/index.js';
import { users as usersTable } from '../../src/users/users.table.js';
import { createTestApp } from '../support/test-app.js';
import { signInAtProvider, startOidcProvider, type TestOidcProvider } from '../support/oidc-provider.js';

const PUBLIC_URL = 'http://sitewarden.test';
const REDIRECT_URI = `${PUBLIC_URL}${OIDC_CALLBACK_PATH}`;
const ROLE_MAP = 'sitewarden-owners=owner,sitewarden-staff=manager,*=viewer';

let idp: TestOidcProvider;
beforeAll(async () => {
  idp = await startOidcProvider({ redirectUri: REDIRECT_URI });
});
afterAll(() => idp.stop());

/** The daemon's app in-process with single sign-on against the test provider (settings as the environment gives them). */
function daemonWith(settings: Record<string, string> = {}, issuer = idp.issuer) {
  const t = createTestApp();
  const config = loadConfig({
    SITEWARDEN_OIDC_ISSUER: issuer,
    SITEWARDEN_OIDC_CLIENT_ID: idp.clientId,
    SITEWARDEN_OIDC_CLIENT_SECRET: idp.clientSecret,
    SITEWARDEN_OIDC_ROLE_MAP: ROLE_MAP,
    SITEWARDEN_OIDC_ALLOWED_DOMAINS: 'agency.example',
    SITEWARDEN_OIDC_SCOPES: 'openid email profile groups',
    SITEWARDEN_OIDC_PROVIDER_NAME: 'Agency SSO',
    SITEWARDEN_OIDC_TIMEOUT_MS: '2000',
    ...settings,
  }).oidc!;
  const oidc = createOidcSignIn({
    config,
    publicUrl: PUBLIC_URL,
    state: t.state,
    users: t.services.users,
    clock: t.clock,
    events: t.services.events,
  });
  const app = createApp({
    ...t.services,
    connectorZipPath: defaultConnectorZipPath(),
    logger: t.logs.logger,
    version: 'test',
    checkDatabase: () => true,
    oidc,
  });
  const userRow = (username: string) =>
    t.database.db.select().from(usersTable).where(eq(usersTable.username, username)).get();
  return { t, app, userRow };
}

type Daemon = ReturnType<typeof daemonWith>;

/** Starts at the daemon, signs in at the provider as `login`, and comes back with `tamper` applied to the callback URL. */
async function ssoSignIn(
  d: Daemon,
  login: string,
  { next, tamper }: { next?: string; tamper?: (url: URL) => void } = {},
) {
  const start = await d.app.request(`/sign-in/oidc${next ? `?next=${encodeURIComponent(next)}` : ''}`);
  expect(start.status).toBe(303);
  const flowCookie = /sw_oidc=[^;]+/.exec(start.headers.get('set-cookie') ?? '')![0];
  const authorizationUrl = new URL(start.headers.get('location')!);
  const back = await signInAtProvider(authorizationUrl.href, login, REDIRECT_URI);
  tamper?.(back);
  const callback = await d.app.request(`${back.pathname}${back.search}`, { headers: { cookie: flowCookie } });
  const html = await callback.text();
  const session = /sw_session=[^;]+/.exec(callback.headers.get('set-cookie') ?? '')?.[0];
  return { start, authorizationUrl, back, flowCookie, callback, html, session };
}

const problemOf = (html: string) => /data-problem-type="([^"]+)"/.exec(html)?.[1];

describe('single sign-on with OpenID Connect', () => {
  let d: Daemon;
  afterEach(() => d.t.close());

  it('signs a new user in with authorization code + PKCE, maps their group to a role, and opens a dashboard session', async () => {
    d = daemonWith();
    idp.accounts.set('alice-sub', {
      email: 'Alice@Agency.example',
      email_verified: true,
      groups: ['sitewarden-staff'],
    });
    const { authorizationUrl, callback, html, session } = await ssoSignIn(d, 'alice-sub', { next: '/updates' });
    // The request to the provider: code flow, PKCE S256, state and nonce, the registered redirect URI.
    expect(authorizationUrl.origin).toBe(idp.issuer);
    expect(authorizationUrl.searchParams.get('response_type')).toBe('code');
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizationUrl.searchParams.get('code_challenge')).toBeTruthy();
    expect(authorizationUrl.searchParams.get('state')).toBeTruthy();
    expect(authorizationUrl.searchParams.get('nonce')).toBeTruthy();
    expect(authorizationUrl.searchParams.get('redirect_uri')).toBe(REDIRECT_URI);

    expect(callback.status).toBe(200);
    expect(session).toBeDefined();
    // Onward to `next` from a page of this origin (the Strict session cookie goes with it).
    expect(callback.headers.get('refresh')).toBe('0;url=/updates');
    expect(html).toContain('Signed in as alice@agency.example');
    const overview = await d.app.request('/', { headers: { cookie: session! } });
    expect(overview.status).toBe(200);

    const row = d.userRow('alice@agency.example')!;
    expect(row).toMatchObject({ role: 'manager', oidcIssuer: idp.issuer, oidcSubject: 'alice-sub' });
    expect(d.t.logs.events('user.oidc_linked')).toMatchObject([{ userId: row.id, issuer: idp.issuer }]);
    expect(d.t.logs.events('user.signed_in')).toMatchObject([{ userId: row.id, method: 'oidc' }]);
  });

  it('leaves a single sign-on session alone when owners require two-factor (the provider’s applies); a password session is sent to set it up', async () => {
    d = daemonWith();
    const owner = await d.t.services.users.create('admin', 'the bootstrap password', 'owner');
    await d.t.services.users.twoFactor.setRequired(true, { kind: 'user', id: owner.id });
    idp.accounts.set('dora-sub', { email: 'dora@agency.example', email_verified: true, groups: ['sitewarden-staff'] });
    const { session } = await ssoSignIn(d, 'dora-sub');
    expect((await d.app.request('/', { headers: { cookie: session! } })).status).toBe(200);

    const byPassword = await d.t.services.users.signIn('admin', 'the bootstrap password', '127.0.0.1');
    expect('token' in byPassword).toBe(true);
    const cookie = `sw_session=${(byPassword as { token: string }).token}`;
    const overview = await d.app.request('/', { headers: { cookie } });
    expect(overview.status).toBe(303);
    expect(overview.headers.get('location')).toBe('/settings/account/two-factor');
  });

  it('sets the role from the claims again at every sign-in', async () => {
    d = daemonWith();
    // Another owner: the last owner is never demoted (an owner must remain), whatever the claims say.
    await d.t.services.users.create('admin', 'the bootstrap password', 'owner');
    idp.accounts.set('carol-sub', {
      email: 'carol@agency.example',
      email_verified: true,
      groups: ['sitewarden-staff'],
    });
    const first = await ssoSignIn(d, 'carol-sub');
    expect(d.userRow('carol@agency.example')!.role).toBe('manager');

    idp.accounts.set('carol-sub', {
      email: 'carol@agency.example',
      email_verified: true,
      groups: ['sitewarden-staff', 'sitewarden-owners'],
    });
    await ssoSignIn(d, 'carol-sub');
    expect(d.userRow('carol@agency.example')!.role).toBe('owner');
    // A role change ends the sessions opened under the old one.
    expect((await d.app.request('/', { headers: { cookie: first.session! } })).status).toBe(303);

    idp.accounts.set('carol-sub', { email: 'carol@agency.example', email_verified: true, groups: [] });
    const third = await ssoSignIn(d, 'carol-sub');
    expect(third.callback.status).toBe(200);
    // No group matched: the `*` fallback.
    expect(d.userRow('carol@agency.example')!.role).toBe('viewer');
    expect((await d.t.services.users.list()).filter((user) => user.username === 'carol@agency.example')).toHaveLength(
      1,
    );
  });

  it('refuses an address outside the allowed domains, and one the provider does not vouch for, with a problem page', async () => {
    d = daemonWith();
    idp.accounts.set('mallory-sub', {
      email: 'mallory@elsewhere.example',
      email_verified: true,
      groups: ['sitewarden-owners'],
    });
    const outside = await ssoSignIn(d, 'mallory-sub');
    expect(outside.callback.status).toBe(403);
    expect(problemOf(outside.html)).toBe('/problems/oidc-domain-refused');
    expect(outside.html).toContain('mallory@elsewhere.example is not in an allowed domain');
    expect(outside.session).toBeUndefined();
    expect(d.userRow('mallory@elsewhere.example')).toBeUndefined();

    idp.accounts.set('dave-sub', {
      email: 'dave@agency.example',
      email_verified: false,
      groups: ['sitewarden-owners'],
    });
    const unverified = await ssoSignIn(d, 'dave-sub');
    expect(unverified.callback.status).toBe(403);
    expect(problemOf(unverified.html)).toBe('/problems/oidc-email-unverified');
    expect(d.userRow('dave@agency.example')).toBeUndefined();
    expect(d.t.logs.events('user.oidc_sign_in_refused').map((event) => event.reason)).toEqual([
      'oidc-domain-refused',
      'oidc-email-unverified',
    ]);
  });

  it('refuses an account no role is mapped for when the map has no fallback', async () => {
    d = daemonWith({ SITEWARDEN_OIDC_ROLE_MAP: 'sitewarden-owners=owner' });
    idp.accounts.set('erin-sub', { email: 'erin@agency.example', email_verified: true, groups: ['marketing'] });
    const refused = await ssoSignIn(d, 'erin-sub');
    expect(refused.callback.status).toBe(403);
    expect(problemOf(refused.html)).toBe('/problems/oidc-no-role');
    expect(refused.html).toContain('Back to sign in');
    expect(d.userRow('erin@agency.example')).toBeUndefined();
  });

  it('refuses a tampered callback: another state, no flow cookie, a replay, a forged code', async () => {
    d = daemonWith();
    idp.accounts.set('frank-sub', {
      email: 'frank@agency.example',
      email_verified: true,
      groups: ['sitewarden-staff'],
    });
    const otherState = await ssoSignIn(d, 'frank-sub', { tamper: (url) => url.searchParams.set('state', 'forged') });
    expect(otherState.callback.status).toBe(400);
    expect(problemOf(otherState.html)).toBe('/problems/oidc-callback-invalid');
    expect(otherState.session).toBeUndefined();

    const forgedCode = await ssoSignIn(d, 'frank-sub', { tamper: (url) => url.searchParams.set('code', 'forged') });
    expect(forgedCode.callback.status).toBe(400);
    expect(problemOf(forgedCode.html)).toBe('/problems/oidc-callback-invalid');

    const good = await ssoSignIn(d, 'frank-sub');
    expect(good.callback.status).toBe(200);
    // The same callback again (its flow is single-use), and one without the browser's flow cookie.
    const replay = await d.app.request(`${good.back.pathname}${good.back.search}`, {
      headers: { cookie: good.flowCookie },
    });
    expect(replay.status).toBe(400);
    expect(problemOf(await replay.text())).toBe('/problems/oidc-sign-in-expired');
    const noCookie = await d.app.request(`${good.back.pathname}${good.back.search}`);
    expect(problemOf(await noCookie.text())).toBe('/problems/oidc-sign-in-expired');
    expect(d.userRow('frank@agency.example')!.role).toBe('manager');
  });

  it('shows the provider’s own refusal as a page, never a 500', async () => {
    d = daemonWith();
    const start = await d.app.request('/sign-in/oidc');
    const flowCookie = /sw_oidc=[^;]+/.exec(start.headers.get('set-cookie')!)![0];
    const state = new URL(start.headers.get('location')!).searchParams.get('state')!;
    const refused = await d.app.request(
      `${OIDC_CALLBACK_PATH}?error=access_denied&error_description=${encodeURIComponent('The user said no')}&state=${state}&iss=${encodeURIComponent(idp.issuer)}`,
      { headers: { cookie: flowCookie } },
    );
    expect(refused.status).toBe(403);
    const html = await refused.text();
    expect(problemOf(html)).toBe('/problems/oidc-provider-refused');
    expect(html).toContain('access_denied: The user said no');
  });

  it('answers a provider that cannot be reached with a problem page, in bounded time', async () => {
    d = daemonWith({}, 'http://127.0.0.1:9/realms/none');
    const before = Date.now();
    const response = await d.app.request('/sign-in/oidc');
    expect(response.status).toBe(502);
    expect(problemOf(await response.text())).toBe('/problems/oidc-provider-unavailable');
    expect(Date.now() - before).toBeLessThan(5_000);
  });

  it('links an existing local account by verified e-mail only when its domain is an allowed one', async () => {
    d = daemonWith();
    const local = await d.t.services.users.create('grace@agency.example', 'a long local password', 'viewer');
    idp.accounts.set('grace-sub', {
      email: 'grace@agency.example',
      email_verified: true,
      groups: ['sitewarden-staff'],
    });
    const linked = await ssoSignIn(d, 'grace-sub');
    expect(linked.callback.status).toBe(200);
    expect(d.userRow('grace@agency.example')).toMatchObject({
      id: local.id,
      oidcSubject: 'grace-sub',
      role: 'manager',
    });
    await d.t.close();

    // No allowed domain listed: the provider is not known to speak for the address; never linked.
    d = daemonWith({ SITEWARDEN_OIDC_ALLOWED_DOMAINS: '' });
    await d.t.services.users.create('heidi@agency.example', 'a long local password', 'owner');
    idp.accounts.set('heidi-sub', {
      email: 'heidi@agency.example',
      email_verified: true,
      groups: ['sitewarden-owners'],
    });
    const conflict = await ssoSignIn(d, 'heidi-sub');
    expect(conflict.callback.status).toBe(409);
    expect(problemOf(conflict.html)).toBe('/problems/oidc-account-conflict');
    expect(d.userRow('heidi@agency.example')!.oidcSubject).toBeNull();
  });

  it('with local passwords off, shows only the single sign-on button and refuses a password; the CLI reset still works', async () => {
    d = daemonWith({ SITEWARDEN_OIDC_LOCAL_PASSWORDS: 'off' });
    await d.t.services.users.create('admin', 'the bootstrap password', 'owner');
    const page = await (await d.app.request('/sign-in?next=/backups')).text();
    expect(page).toContain('href="/sign-in/oidc?next=%2Fbackups"');
    expect(page).toContain('Sign in with Agency SSO');
    expect(page).not.toContain('type="password"');
    const refused = await d.app.request('/sign-in', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username: 'admin', password: 'the bootstrap password' }).toString(),
    });
    expect(refused.status).toBe(403);
    expect(problemOf(await refused.text())).toBe('/problems/password-sign-in-disabled');
    expect(refused.headers.get('set-cookie') ?? '').not.toContain('sw_session');
    // The break-glass path (`sitewarden users reset-password`) is the service's and stays open.
    expect((await d.t.services.users.resetPassword('admin')).length).toBeGreaterThanOrEqual(12);
  });

  it('gives a client the scope tags its claims name, again at every sign-in', async () => {
    d = daemonWith({
      SITEWARDEN_OIDC_ROLE_MAP: 'sitewarden-owners=owner,*=client',
      SITEWARDEN_OIDC_TAGS_CLAIM: 'groups',
      SITEWARDEN_OIDC_TAG_PREFIX: 'client:',
    });
    idp.accounts.set('ivan-sub', { email: 'ivan@agency.example', email_verified: true, groups: ['client:Acme', 'x'] });
    expect((await ssoSignIn(d, 'ivan-sub')).callback.status).toBe(200);
    const ivan = async () => (await d.t.services.users.find(d.userRow('ivan@agency.example')!.id))!;
    expect(await ivan()).toMatchObject({ role: 'client', scopeTags: ['acme'] });
    idp.accounts.set('ivan-sub', { email: 'ivan@agency.example', email_verified: true, groups: ['client:globex'] });
    await ssoSignIn(d, 'ivan-sub');
    expect((await ivan()).scopeTags).toEqual(['globex']);
    // A client the claims give no tag would see nothing: refused, with the scope problem.
    idp.accounts.set('ivan-sub', { email: 'ivan@agency.example', email_verified: true, groups: [] });
    const none = await ssoSignIn(d, 'ivan-sub');
    expect(none.callback.status).toBe(400);
    expect(none.session).toBeUndefined();
  });

  it('with passwords on, the sign-in page offers both', async () => {
    d = daemonWith();
    const page = await (await d.app.request('/sign-in')).text();
    expect(page).toContain('href="/sign-in/oidc"');
    expect(page).toContain('type="password"');
  });
});
