import { generateSync } from 'otplib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NO_INLINE_CODE, withoutOwnStylesheet } from '../dashboard/signed-in.js';
import { createFakeClock, createTestApp, type TestApp } from '../support/test-app.js';

const PASSWORD = 'correct horse battery staple';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** What the database holds for a user's two-factor. */
function stored(t: TestApp, userId: string) {
  const user = t.database.sqlite
    .prepare('SELECT totp_secret, totp_pending_secret, totp_enabled_at, totp_last_step FROM users WHERE id = ?')
    .get(userId) as {
    totp_secret: string | null;
    totp_pending_secret: string | null;
    totp_enabled_at: number | null;
    totp_last_step: number | null;
  };
  const codes = t.database.sqlite
    .prepare('SELECT code_hash, used_at FROM recovery_codes WHERE user_id = ?')
    .all(userId) as { code_hash: string; used_at: number | null }[];
  return { ...user, codes };
}

const cookieOf = (response: Response, name: string) =>
  new RegExp(`${name}=[^;]+`).exec(response.headers.get('set-cookie') ?? '')?.[0];

/** A browser of the dashboard: keeps its cookies, reads the CSRF token of the last page. */
function browser(t: TestApp, userAgent = 'Mozilla/5.0 (X11; Linux x86_64) Test/1.0') {
  const jar = new Map<string, string>();
  let csrf = '';
  const keep = (response: Response) => {
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const [name, value] = pair!.split('=');
      if (!value || /Max-Age=0/i.test(cookie) || /Expires=Thu, 01 Jan 1970/i.test(cookie)) jar.delete(name!);
      else jar.set(name!, value);
    }
    return response;
  };
  const headers = () => ({
    cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; '),
    'user-agent': userAgent,
  });
  return {
    jar,
    async get(path: string) {
      const response = keep(await t.app.request(path, { headers: headers() }));
      if (response.headers.get('content-type')?.startsWith('text/html')) {
        const text = await response.clone().text();
        csrf = /data-csrf="([^"]+)"/.exec(text)?.[1] ?? csrf;
      }
      return response;
    },
    async post(path: string, form: Record<string, string> = {}, withCsrf = true) {
      const body = new URLSearchParams(form);
      if (withCsrf && csrf) body.append('_csrf', csrf);
      return keep(
        await t.app.request(path, { method: 'POST', headers: { ...headers(), ...FORM }, body: body.toString() }),
      );
    },
    async signIn(username: string, password = PASSWORD, next = '/') {
      return this.post('/sign-in', { username, password, next }, false);
    },
  };
}

describe('two-factor sign-in (TOTP) and sessions', () => {
  let t: TestApp;
  let clock: ReturnType<typeof createFakeClock>;
  const code = (secret: string, offsetSeconds = 0) =>
    generateSync({ secret, epoch: Math.floor(clock.now().getTime() / 1000) + offsetSeconds });

  beforeEach(() => {
    // 10 s into a 30-second step, so a code of the next step is a clean 30 s away.
    clock = createFakeClock(new Date('2026-03-01T10:00:10Z'));
    t = createTestApp({ clock });
  });
  afterEach(() => t.close());

  /** Alice enrols through the dashboard; returns her secret and recovery codes. */
  async function enrol(alice: ReturnType<typeof browser>) {
    expect((await alice.get('/settings/account/two-factor')).status).toBe(200);
    expect((await alice.post('/settings/account/two-factor/begin')).status).toBe(303);
    const page = await (await alice.get('/settings/account/two-factor')).text();
    const secret = /id="totp-secret">([A-Z2-7]+)</.exec(page)![1]!;
    const confirmed = await alice.post('/settings/account/two-factor/confirm', { code: code(secret) });
    expect(confirmed.status).toBe(200);
    const recoveryCodes = [
      ...(await confirmed.text()).matchAll(/<code class="secret-value">([a-z2-9-]+)<\/code>/g),
    ].map((m) => m[1]!);
    return { secret, recoveryCodes, page };
  }

  it('enrols from the account page: QR code, secret sealed, enabled only by a right code, ten hashed recovery codes', async () => {
    const user = await t.services.users.create('alice', PASSWORD);
    const alice = browser(t);
    expect((await alice.signIn('alice')).status).toBe(303);
    const account = await (await alice.get('/settings/account')).text();
    expect(account).toContain('Set up two-factor');

    expect((await alice.post('/settings/account/two-factor/begin')).status).toBe(303);
    const page = await (await alice.get('/settings/account/two-factor')).text();
    const secret = /id="totp-secret">([A-Z2-7]+)</.exec(page)![1]!;
    expect(page).toMatch(/<svg [^>]*role="img"/);
    expect(page).toContain(`otpauth://totp/Sitewarden:alice?secret=${secret}`);
    // CSP-safe: no inline script or style attribute, the SVG included.
    expect(withoutOwnStylesheet(page)).not.toMatch(NO_INLINE_CODE);
    // Pending and sealed, not on yet; the secret never stored in clear.
    let row = stored(t, user.id);
    expect(row.totp_secret).toBeNull();
    expect(row.totp_pending_secret).toMatch(/^v1:/);
    expect(row.totp_pending_secret).not.toContain(secret);

    const wrong = await alice.post('/settings/account/two-factor/confirm', {
      code: '000000' === code(secret) ? '111111' : '000000',
    });
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain('the code is not right');
    expect(stored(t, user.id).totp_secret).toBeNull();

    const confirmed = await alice.post('/settings/account/two-factor/confirm', { code: code(secret) });
    expect(confirmed.status).toBe(200);
    const codes = [...(await confirmed.text()).matchAll(/<code class="secret-value">([a-z2-9-]+)<\/code>/g)].map(
      (m) => m[1]!,
    );
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    row = stored(t, user.id);
    expect(row.totp_secret).toMatch(/^v1:/);
    expect(row.totp_secret).not.toContain(secret);
    expect(row.totp_pending_secret).toBeNull();
    expect(row.codes).toHaveLength(10);
    for (const c of codes) expect(row.codes.map((r) => r.code_hash).join()).not.toContain(c);
    expect(t.logs.events('user.two_factor_enabled')).toEqual([expect.objectContaining({ userId: user.id })]);
    // The secret is never in a log line.
    expect(t.logs.raw()).not.toContain(secret);
    expect(await (await alice.get('/settings/account')).text()).toContain('10 of 10 recovery codes left');
  });

  it('signs in with the password, then a code: no session in between, a used code refused', async () => {
    const user = await t.services.users.create('alice', PASSWORD);
    const setup = browser(t);
    await setup.signIn('alice');
    const { secret } = await enrol(setup);

    const alice = browser(t, 'Firefox/999');
    const first = await alice.signIn('alice', PASSWORD, '/settings');
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/sign-in/two-factor?next=%2Fsettings');
    // The half-signed-in state is not a session: no session cookie, and pages still ask to sign in.
    expect(cookieOf(first, 'sw_session')).toBeUndefined();
    expect(cookieOf(first, 'sw_2fa')).toBeDefined();
    expect(first.headers.get('set-cookie')).toMatch(/sw_2fa=[^;]+;.*Path=\/sign-in\/two-factor/);
    const before = (
      t.database.sqlite.prepare('SELECT count(*) AS n FROM sessions WHERE user_id = ?').get(user.id) as { n: number }
    ).n;
    expect((await alice.get('/settings')).headers.get('location')).toMatch(/^\/sign-in/);
    expect((await alice.get('/sign-in/two-factor?next=%2Fsettings')).status).toBe(200);

    // The code that confirmed the enrolment (this very step) cannot be used again: replay.
    const replay = await alice.post('/sign-in/two-factor', { code: code(secret), next: '/settings' }, false);
    expect(replay.status).toBe(401);
    expect(t.logs.events('user.two_factor_failed')).toHaveLength(1);

    // 30 s later, the next step's code signs in.
    clock.advance(30_000);
    const done = await alice.post('/sign-in/two-factor', { code: code(secret), next: '/settings' }, false);
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/settings');
    expect(cookieOf(done, 'sw_session')).toBeDefined();
    expect((await alice.get('/settings')).status).toBe(200);
    const after = (
      t.database.sqlite.prepare('SELECT count(*) AS n FROM sessions WHERE user_id = ?').get(user.id) as { n: number }
    ).n;
    expect(after).toBe(before + 1);
    // The same code again, on a new sign-in: refused (its step was used).
    const again = browser(t);
    await again.signIn('alice');
    expect((await again.post('/sign-in/two-factor', { code: code(secret) }, false)).status).toBe(401);
  });

  it('counts wrong codes before checking them: past five, even the right code waits, and a right password does not reset it', async () => {
    await t.services.users.create('alice', PASSWORD);
    const setup = browser(t);
    await setup.signIn('alice');
    const { secret } = await enrol(setup);
    clock.advance(30_000);
    const attacker = browser(t);
    await attacker.signIn('alice');
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await attacker.post('/sign-in/two-factor', { code: String(100000 + i) }, false)).status);
    expect(statuses.slice(0, 5).every((s) => s === 401)).toBe(true);
    expect(statuses[5]).toBe(429);
    const limited = await attacker.post('/sign-in/two-factor', { code: code(secret) }, false);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(cookieOf(limited, 'sw_session')).toBeUndefined();
    // A right password again does not reset the count of codes.
    await attacker.signIn('alice');
    expect((await attacker.post('/sign-in/two-factor', { code: code(secret) }, false)).status).toBe(429);
  });

  it('takes a recovery code once, and ends the pending sign-in after five minutes', async () => {
    const user = await t.services.users.create('alice', PASSWORD);
    const setup = browser(t);
    await setup.signIn('alice');
    const { recoveryCodes } = await enrol(setup);

    const alice = browser(t);
    await alice.signIn('alice');
    const typed = recoveryCodes[3]!.toUpperCase().replace(/-/g, ' ');
    const used = await alice.post('/sign-in/two-factor', { code: typed }, false);
    expect(used.status).toBe(303);
    expect(cookieOf(used, 'sw_session')).toBeDefined();
    expect(stored(t, user.id).codes.filter((c) => c.used_at !== null)).toHaveLength(1);
    expect(t.logs.events('user.recovery_code_used')).toEqual([
      expect.objectContaining({ userId: user.id, remaining: 9 }),
    ]);

    const again = browser(t);
    await again.signIn('alice');
    expect((await again.post('/sign-in/two-factor', { code: recoveryCodes[3]! }, false)).status).toBe(401);
    clock.advance(5 * 60_000 + 1);
    const expired = await again.post('/sign-in/two-factor', { code: recoveryCodes[4]! }, false);
    expect(expired.status).toBe(401);
    expect(await expired.text()).toContain('expired');
    expect(stored(t, user.id).codes.filter((c) => c.used_at !== null)).toHaveLength(1);
  });

  it('sends a user without two-factor to enrol when owners require it; API tokens keep working; owners reset it', async () => {
    const bob = await t.services.users.create('bob', PASSWORD, 'manager');
    const bobsToken = (await t.services.tokens.create('bob-ci', 'manager', { userId: bob.id })).token;
    const required = await t.call('PUT', '/api/users/two-factor-requirement', { json: { required: true } });
    expect([required.status, required.json]).toEqual([200, { required: true }]);
    expect(t.logs.events('user.two_factor_required_changed')).toEqual([expect.objectContaining({ required: true })]);
    // Only owners set it.
    expect(
      (await t.call('PUT', '/api/users/two-factor-requirement', { token: bobsToken, json: { required: false } }))
        .status,
    ).toBe(403);

    const browserOfBob = browser(t);
    expect((await browserOfBob.signIn('bob')).status).toBe(303);
    for (const path of ['/', '/settings', '/settings/account', '/activity'])
      expect((await browserOfBob.get(path)).headers.get('location'), path).toBe('/settings/account/two-factor');
    const enrolPage = await browserOfBob.get('/settings/account/two-factor');
    expect(enrolPage.status).toBe(200);
    expect(await enrolPage.text()).toContain('The owners require two-factor sign-in');
    expect((await browserOfBob.post('/settings/tokens', { name: 'x' })).headers.get('location')).toBe(
      '/settings/account/two-factor',
    );
    expect((await t.call('GET', '/api/sites', { token: bobsToken })).status).toBe(200);

    const { secret } = await enrol(browserOfBob);
    expect((await browserOfBob.get('/')).status).toBe(200);
    expect(stored(t, bob.id).totp_secret).not.toBeNull();

    // An owner resets bob's two-factor (a lost phone): gone in the database, an event names who.
    const owner = await t.services.users.create('olga', PASSWORD, 'owner');
    const ownersToken = (await t.services.tokens.create('olga', 'owner', { userId: owner.id })).token;
    const reset = await t.call('DELETE', `/api/users/${bob.id}/two-factor`, { token: ownersToken });
    expect(reset.status).toBe(204);
    expect(stored(t, bob.id)).toMatchObject({ totp_secret: null, codes: [] });
    expect(t.logs.events('user.two_factor_reset')).toEqual([
      expect.objectContaining({ userId: bob.id, by: { kind: 'token', id: expect.any(String) } }),
    ]);
    expect(secret).toBeTruthy();
    // Not required any more: pages open again.
    await t.call('PUT', '/api/users/two-factor-requirement', { json: { required: false } });
    const freshBob = browser(t);
    await freshBob.signIn('bob');
    expect((await freshBob.get('/')).status).toBe(200);
  });

  it('enrols, regenerates and disables over the API, with problem types for each mistake', async () => {
    const alice = await t.services.users.create('alice', PASSWORD, 'viewer');
    const token = (await t.services.tokens.create('alice', 'viewer', { userId: alice.id })).token;
    const call = (method: string, path: string, json?: unknown) => t.call(method, path, { token, json });

    expect((await call('GET', '/api/users/me/two-factor')).json).toMatchObject({ enabled: false, pending: false });
    const notPending = await call('POST', '/api/users/me/two-factor/confirm', { code: '123456' });
    expect([notPending.status, notPending.json.type]).toEqual([409, '/problems/two-factor-not-pending']);
    const begun = await call('POST', '/api/users/me/two-factor');
    expect(begun.status).toBe(201);
    expect(begun.json.uri).toContain(begun.json.secret);
    expect(begun.json.qrSvg).toMatch(/^<svg /);
    const wrong = await call('POST', '/api/users/me/two-factor/confirm', { code: 'abcdef' });
    expect([wrong.status, wrong.json.type]).toEqual([400, '/problems/two-factor-code-invalid']);
    expect(wrong.headers.get('content-type')).toContain('application/problem+json');
    const confirmed = await call('POST', `/api/users/${alice.id}/two-factor/confirm`, {
      code: code(begun.json.secret),
    });
    expect(confirmed.status).toBe(200);
    expect(confirmed.json.recoveryCodes).toHaveLength(10);
    expect((await call('GET', '/api/users/me/two-factor')).json).toMatchObject({
      enabled: true,
      recoveryCodesLeft: 10,
    });
    const already = await call('POST', '/api/users/me/two-factor');
    expect([already.status, already.json.type]).toEqual([409, '/problems/two-factor-already-enabled']);

    // New recovery codes need a current code, not a used one.
    const replayed = await call('POST', '/api/users/me/two-factor/recovery-codes', { code: code(begun.json.secret) });
    expect([replayed.status, replayed.json.type]).toEqual([400, '/problems/two-factor-code-invalid']);
    clock.advance(30_000);
    const regenerated = await call('POST', '/api/users/me/two-factor/recovery-codes', {
      code: code(begun.json.secret),
    });
    expect(regenerated.status).toBe(200);
    expect(regenerated.json.recoveryCodes).not.toEqual(confirmed.json.recoveryCodes);
    expect(stored(t, alice.id).codes.map((c) => c.code_hash)).toHaveLength(10);

    // A viewer may not touch another user's, and an operator token has no "me".
    const other = await t.services.users.create('bob', PASSWORD, 'viewer');
    expect((await call('GET', `/api/users/${other.id}/two-factor`)).status).toBe(403);
    expect((await call('GET', `/api/users/${other.id}/sessions`)).status).toBe(403);
    const operator = await t.call('GET', '/api/users/me/two-factor');
    expect([operator.status, operator.json.type]).toEqual([400, '/problems/token-has-no-user']);

    // Off: a code or the password is needed.
    const noProof = await call('DELETE', '/api/users/me/two-factor');
    expect([noProof.status, noProof.json.type]).toEqual([400, '/problems/two-factor-proof-required']);
    const badPassword = await call('DELETE', '/api/users/me/two-factor', { password: 'not the password at all' });
    expect([badPassword.status, badPassword.json.type]).toEqual([400, '/problems/current-password-incorrect']);
    expect((await call('DELETE', '/api/users/me/two-factor', { password: PASSWORD })).status).toBe(204);
    expect(stored(t, alice.id)).toMatchObject({ totp_secret: null, codes: [] });
    expect(t.logs.events('user.two_factor_disabled')).toHaveLength(1);
  });

  it('lists sessions with address and a cleaned user agent, and revoking one ends its event stream', async () => {
    const alice = await t.services.users.create('alice', PASSWORD, 'viewer');
    const token = (await t.services.tokens.create('alice', 'viewer', { userId: alice.id })).token;
    const laptop = browser(t, 'Laptop\tBrowser\u0007/1.0');
    const phone = browser(t, 'Phone/2.0 ' + 'x'.repeat(400));
    await laptop.signIn('alice');
    await phone.signIn('alice');

    const listed = await t.call('GET', '/api/users/me/sessions', { token });
    expect(listed.status).toBe(200);
    expect(listed.json.items).toHaveLength(2);
    const agents = listed.json.items.map((s: { userAgent: string }) => s.userAgent).sort();
    expect(agents[0]).toBe('LaptopBrowser/1.0');
    expect(agents[1]).toHaveLength(256);
    expect(listed.json.items[0]).toMatchObject({ address: 'local', current: false });

    // The account page marks the current session and offers Revoke for the other.
    const account = await (await laptop.get('/settings/account')).text();
    expect(account).toContain('This session');
    expect(account).toContain('Phone/2.0');
    expect(account).toContain('Sign out everywhere else');

    // The phone's open event stream closes when the laptop revokes the phone's session.
    const stream = await phone.get('/events');
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = stream.body!.getReader();
    const phoneId = listed.json.items.find((s: { userAgent: string }) => s.userAgent.startsWith('Phone')).id;
    const revoked = await laptop.post(`/settings/account/sessions/${phoneId}/revoke`);
    expect(revoked.status).toBe(303);
    const ended = await Promise.race([
      (async () => {
        for (;;) if ((await reader.read()).done) return 'ended';
      })(),
      new Promise((resolve) => setTimeout(() => resolve('open'), 5_000)),
    ]);
    expect(ended).toBe('ended');
    expect((await phone.get('/settings')).headers.get('location')).toMatch(/^\/sign-in/);
    expect((await t.call('GET', '/api/users/me/sessions', { token })).json.items).toHaveLength(1);
    expect(t.logs.events('user.sessions_revoked')).toEqual([
      expect.objectContaining({ userId: alice.id, count: 1, by: { kind: 'user', id: alice.id } }),
    ]);

    // Unknown session: 404 problem; over the API one's own by id.
    const unknown = await t.call('DELETE', '/api/users/me/sessions/ses_nope', { token });
    expect([unknown.status, unknown.json.type]).toEqual([404, '/problems/session-not-found']);

    // Sign out everywhere else keeps this one.
    const tablet = browser(t, 'Tablet');
    await tablet.signIn('alice');
    await laptop.get('/settings/account');
    expect((await laptop.post('/settings/account/sessions/revoke-others')).status).toBe(303);
    expect((await tablet.get('/settings')).headers.get('location')).toMatch(/^\/sign-in/);
    expect((await laptop.get('/settings')).status).toBe(200);

    // An owner sees and revokes any user's sessions: dashboard page, API.
    const olga = await t.services.users.create('olga', PASSWORD, 'owner');
    const owner = browser(t);
    await owner.signIn('olga');
    const page = await owner.get(`/settings/users/${alice.id}/sessions`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('LaptopBrowser/1.0');
    // A viewer may not see that page.
    expect((await laptop.get(`/settings/users/${olga.id}/sessions`)).status).toBe(403);
    const all = await t.call('DELETE', `/api/users/${alice.id}/sessions`);
    expect([all.status, all.json]).toEqual([200, { ended: 1 }]);
    expect((await laptop.get('/settings')).headers.get('location')).toMatch(/^\/sign-in/);
  });
});
