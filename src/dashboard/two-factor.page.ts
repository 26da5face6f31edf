import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { html, raw } from 'hono/html';
import { clientAddress } from '../http/client-address.js';
import { isAppError, isProblem } from '../shared/errors.js';
import { twoFactorProblems, usersProblems, type UsersService } from '../users/index.js';
import type { DashboardServices } from './deps.js';
import { csrfField, page, publicPage, type Html } from './layout.js';
import { isSecure, setFlash, setSessionCookie, takeFlash, type DashboardEnv, type Flash } from './session.js';

/** Where a user enrols; while owners require two-factor, a user without it is sent here from every page. */
const ENROL_PATH = '/settings/account/two-factor';
export const SIGN_IN_CODE_PATH = '/sign-in/two-factor';
/** The pending second step of a sign-in: a random token naming it in the daemon's memory; it is not a session. */
const PENDING_COOKIE = 'sw_2fa';

const safeNext = (next: unknown) => (typeof next === 'string' && /^\/(?![/\\])[\x21-\x7e]*$/.test(next) ? next : '/');
const field = (form: Record<string, unknown>, name: string) =>
  typeof form[name] === 'string' ? (form[name] as string).trim() : '';

/** After a right password with two-factor on: the pending cookie (only for the code page), then the code page. */
export function startSecondStep(
  c: Context,
  pending: { pendingToken: string; expiresAt: Date },
  next: string,
  httpsPublicUrl: boolean,
) {
  setCookie(c, PENDING_COOKIE, pending.pendingToken, {
    httpOnly: true,
    secure: isSecure(c, httpsPublicUrl),
    sameSite: 'Strict',
    path: SIGN_IN_CODE_PATH,
    expires: pending.expiresAt,
  });
  return c.redirect(`${SIGN_IN_CODE_PATH}?next=${encodeURIComponent(safeNext(next))}`, 303);
}

function codeForm({ next, error }: { next: string; error?: string }) {
  return publicPage(
    'Two-factor code',
    html`<section class="signin">
      <h1>Sitewarden</h1>
      <form method="post" action="${SIGN_IN_CODE_PATH}">
        <h2>Two-factor code</h2>
        ${error ? html`<p class="flash error" role="alert">${error}</p>` : ''}
        <input type="hidden" name="next" value="${next}" />
        <label for="code">The 6-digit code from your authenticator app, or a recovery code</label>
        <input
          id="code"
          name="code"
          autocomplete="one-time-code"
          autocapitalize="off"
          spellcheck="false"
          required
          maxlength="40"
          autofocus
        />
        <button type="submit">Sign in</button>
      </form>
      <p class="hint">Lost your phone? Use one of your recovery codes, or ask an owner to reset your two-factor.</p>
      <p class="hint"><a href="/sign-in">Start again</a></p>
    </section>`,
  );
}

/** The sign-in's second step: a TOTP code or a recovery code for the pending sign-in, throttled like passwords. */
export function createTwoFactorSignInRoutes({
  users,
  httpsPublicUrl,
}: {
  users: UsersService;
  httpsPublicUrl: boolean;
}) {
  const app = new Hono<DashboardEnv>();
  app.get(SIGN_IN_CODE_PATH, (c) => {
    if (!getCookie(c, PENDING_COOKIE)) return c.redirect('/sign-in', 303);
    return c.html(codeForm({ next: safeNext(c.req.query('next')) }));
  });
  app.post(SIGN_IN_CODE_PATH, async (c) => {
    const form = await c.req.parseBody();
    const next = safeNext(form.next);
    const pending = getCookie(c, PENDING_COOKIE) ?? '';
    const clear = () =>
      deleteCookie(c, PENDING_COOKIE, { path: SIGN_IN_CODE_PATH, secure: isSecure(c, httpsPublicUrl) });
    try {
      const signedIn = await users.completeSignIn(
        pending,
        field(form, 'code'),
        clientAddress(c),
        c.req.header('user-agent'),
      );
      clear();
      setSessionCookie(c, signedIn.token, signedIn.expiresAt, isSecure(c, httpsPublicUrl));
      if (signedIn.factor === 'recovery-code')
        setFlash(c, {
          kind: 'ok',
          text: 'You signed in with a recovery code, which is now used up: make new ones on your account page.',
        });
      return c.redirect(next, 303);
    } catch (error) {
      if (isProblem(error, twoFactorProblems.signInExpired)) {
        clear();
        return c.html(codeForm({ next, error: 'This sign-in expired: start again with your password.' }), 401);
      }
      if (isProblem(error, usersProblems.signInLimited)) {
        c.header('Retry-After', String(error.extensions?.retryAfter ?? 60));
        return c.html(codeForm({ next, error: error.detail }), 429);
      }
      if (isProblem(error, twoFactorProblems.codeInvalid))
        return c.html(codeForm({ next, error: 'That code is not right (or was used already).' }), 401);
      throw error;
    }
  });
  return app;
}

/**
 * While owners require two-factor, a user signed in by password without it reaches only the
 * enrolment page (and can sign out): every other dashboard page redirects there. A single sign-on
 * session is not concerned (its second factor is the provider's), nor are API tokens.
 */
export function requireTwoFactorEnrolment(users: UsersService): MiddlewareHandler<DashboardEnv> {
  return async (c, next) => {
    const session = c.get('session');
    if (!session || session.user.twoFactorEnabled || session.method === 'oidc' || !(await users.twoFactor.required()))
      return next();
    const path = c.req.path;
    if (path === ENROL_PATH || path.startsWith(`${ENROL_PATH}/`)) return next();
    if (c.req.header('accept')?.includes('text/event-stream')) return c.text('set up two-factor first', 403);
    return c.redirect(ENROL_PATH, 303);
  };
}

const dateTime = (at: Date | null) => (at ? at.toISOString().slice(0, 16).replace('T', ' ') + ' UTC' : '—');

/** The account page's two-factor section: on (recovery codes, turn off) or off (set up). */
export async function twoFactorSection(deps: DashboardServices, c: Context<DashboardEnv>): Promise<Html> {
  const session = c.get('session');
  const status = await deps.users.twoFactor.status(session.user.id);
  if (!status.enabled)
    return html`<section class="card" id="two-factor" aria-labelledby="two-factor-h">
      <h2 id="two-factor-h">Two-factor sign-in</h2>
      <p>
        Off${status.required ? html` — <strong>the owners require it</strong>` : ''}. With it on, signing in asks for a
        code from an authenticator app after your password.
      </p>
      <p><a class="button" href="${ENROL_PATH}">Set up two-factor</a></p>
    </section>`;
  return html`<section class="card" id="two-factor" aria-labelledby="two-factor-h">
    <h2 id="two-factor-h">Two-factor sign-in</h2>
    <p>On since ${dateTime(status.enabledAt)}; ${status.recoveryCodesLeft} of 10 recovery codes left.</p>
    <form class="connect" method="post" action="${ENROL_PATH}/recovery-codes">
      <h3>New recovery codes</h3>
      ${csrfField(session)}
      <label for="rc-code">A current code from your app</label>
      <input id="rc-code" name="code" required inputmode="numeric" autocomplete="one-time-code" maxlength="10" />
      <p class="muted">The old codes stop working.</p>
      <button type="submit" class="secondary">Make new recovery codes</button>
    </form>
    <form class="connect" method="post" action="${ENROL_PATH}/disable">
      <h3>Turn two-factor off</h3>
      ${csrfField(session)}
      <label for="off-code">A current code (or a recovery code)</label>
      <input id="off-code" name="code" autocomplete="one-time-code" maxlength="40" />
      <label for="off-password">or your password</label>
      <input id="off-password" name="password" type="password" autocomplete="current-password" />
      ${status.required ? html`<p class="muted">The owners require two-factor: you will be asked to set it up again.</p>` : ''}
      <button type="submit" class="danger">Turn off</button>
    </form>
  </section>`;
}

function recoveryCodesCard(codes: string[]): Html {
  return html`<section class="card secret" role="status" id="recovery-codes">
    <h2>Your recovery codes</h2>
    <p>
      Copy them now and keep them somewhere safe: they are shown only this once. Each signs you in once instead of a
      code, when your phone is not at hand.
    </p>
    <ul class="recovery-codes">
      ${codes.map((code) => html`<li><code class="secret-value">${code}</code></li>`)}
    </ul>
    <p><a class="button" href="/settings/account">Done</a></p>
  </section>`;
}

/** The account's two-factor pages: enrolment (QR code, confirm), recovery codes, turning it off. */
export function createTwoFactorPages(deps: DashboardServices) {
  const app = new Hono<DashboardEnv>();
  const twoFactor = () => deps.users.twoFactor;

  async function enrolPage(c: Context<DashboardEnv>, flash: Flash | null = takeFlash(c), status: 200 | 400 = 200) {
    const session = c.get('session');
    if (session.user.twoFactorEnabled) return c.redirect('/settings/account', 303);
    const required = await twoFactor().required();
    const enrolment = await twoFactor().pendingEnrolment(session.user.id);
    const body = html`<h1>Set up two-factor sign-in</h1>
      ${
        required
          ? html`<p class="flash error" role="status">
              The owners require two-factor sign-in: set it up to go on using the dashboard.
            </p>`
          : ''
      }
      ${
        enrolment
          ? html`<section class="card" aria-labelledby="scan-h">
                <h2 id="scan-h">1. Scan this code with your authenticator app</h2>
                <figure class="qr">${raw(enrolment.qrSvg)}</figure>
                <p>
                  Or type the secret into the app:
                  <code class="secret-value" id="totp-secret">${enrolment.secret}</code>
                </p>
                <details>
                  <summary>The otpauth URI</summary>
                  <p><code>${enrolment.uri}</code></p>
                </details>
              </section>
              <form class="connect" method="post" action="${ENROL_PATH}/confirm">
                <h2>2. Enter the code the app shows</h2>
                ${csrfField(session)}
                <label for="enrol-code">6-digit code</label>
                <input
                  id="enrol-code"
                  name="code"
                  required
                  inputmode="numeric"
                  autocomplete="one-time-code"
                  maxlength="10"
                  autofocus
                />
                <button type="submit">Turn on two-factor</button>
              </form>
              <form method="post" action="${ENROL_PATH}/begin">
                ${csrfField(session)}<button type="submit" class="secondary">Start over with a new secret</button>
              </form>`
          : html`<section class="card">
              <p>
                You will need an authenticator app (such as Aegis, Google Authenticator, 1Password or Bitwarden) on your
                phone. Signing in will then ask for its current code after your password.
              </p>
              <form method="post" action="${ENROL_PATH}/begin">
                ${csrfField(session)}<button type="submit">Begin</button>
              </form>
            </section>`
      }`;
    return c.html(page({ title: 'Two-factor sign-in', session, current: '/settings', body, flash }), status);
  }

  app.get(ENROL_PATH, (c) => enrolPage(c));
  app.post(`${ENROL_PATH}/begin`, async (c) => {
    try {
      await twoFactor().begin(c.get('session').user.id);
    } catch (error) {
      if (!isAppError(error)) throw error;
      setFlash(c, { kind: 'error', text: error.detail });
    }
    return c.redirect(ENROL_PATH, 303);
  });
  app.post(`${ENROL_PATH}/confirm`, async (c) => {
    const form = await c.req.parseBody();
    const session = c.get('session');
    try {
      const { recoveryCodes } = await twoFactor().confirm(session.user.id, field(form, 'code'));
      const body = html`<h1>Two-factor sign-in is on</h1>
        ${recoveryCodesCard(recoveryCodes)}`;
      return c.html(page({ title: 'Two-factor sign-in', session, current: '/settings', body }));
    } catch (error) {
      if (!isAppError(error)) throw error;
      return enrolPage(c, { kind: 'error', text: error.detail }, 400);
    }
  });
  app.post(`${ENROL_PATH}/recovery-codes`, async (c) => {
    const form = await c.req.parseBody();
    const session = c.get('session');
    try {
      const { recoveryCodes } = await twoFactor().regenerateRecoveryCodes(session.user.id, field(form, 'code'));
      const body = html`<h1>New recovery codes</h1>
        ${recoveryCodesCard(recoveryCodes)}`;
      return c.html(page({ title: 'Recovery codes', session, current: '/settings', body }));
    } catch (error) {
      if (!isAppError(error)) throw error;
      setFlash(c, { kind: 'error', text: error.detail });
      return c.redirect('/settings/account', 303);
    }
  });
  app.post(`${ENROL_PATH}/disable`, async (c) => {
    const form = await c.req.parseBody();
    const session = c.get('session');
    try {
      await twoFactor().disable(
        session.user.id,
        {
          code: field(form, 'code') || undefined,
          password: typeof form.password === 'string' && form.password ? form.password : undefined,
        },
        { kind: 'user', id: session.user.id },
      );
      setFlash(c, { kind: 'ok', text: 'Two-factor sign-in is off; your recovery codes no longer work.' });
    } catch (error) {
      if (!isAppError(error)) throw error;
      setFlash(c, { kind: 'error', text: error.detail });
    }
    return c.redirect('/settings/account', 303);
  });
  return app;
}
