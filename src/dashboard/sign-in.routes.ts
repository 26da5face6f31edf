import { Hono, type Context } from 'hono';
import { html } from 'hono/html';
import { clientAddress } from '../http/client-address.js';
import { isProblem, type AppError } from '../shared/errors.js';
import { usersProblems, type UsersService } from '../users/index.js';
import { publicPage } from './layout.js';
import { clearSessionCookie, isSecure, requireSession, setSessionCookie, type DashboardEnv } from './session.js';
import { createTwoFactorSignInRoutes, startSecondStep } from './two-factor.page.js';
import {
  createSingleSignOnRoutes,
  passwordSignInRefused,
  singleSignOnButton,
  type SingleSignOn,
} from './single-sign-on.routes.js';

/**
 * Only a path of this origin is followed after sign-in: one `/`, then no second `/` or `\`, and
 * nothing but visible ASCII (browsers drop tabs and newlines, so `/\t/host` would be `//host`, and
 * a CR would break the Location header).
 */
const safeNext = (next: unknown) => (typeof next === 'string' && /^\/(?![/\\])[\x21-\x7e]*$/.test(next) ? next : '/');

function signInForm({
  next,
  username = '',
  error,
  sso,
}: {
  next: string;
  username?: string;
  error?: string;
  sso?: SingleSignOn;
}) {
  // Local passwords switched off (SITEWARDEN_OIDC_LOCAL_PASSWORDS=off): the single sign-on button only.
  if (sso && !sso.localPasswords)
    return publicPage(
      'Sign in',
      html`<section class="signin">
        <h1>Sitewarden</h1>
        ${singleSignOnButton(sso, next)}
      </section>`,
    );
  return publicPage(
    'Sign in',
    html`<section class="signin">
      <h1>Sitewarden</h1>
      ${sso ? singleSignOnButton(sso, next) : ''}
      <form method="post" action="/sign-in">
        <h2>Sign in</h2>
        ${error ? html`<p class="flash error" role="alert">${error}</p>` : ''}
        <input type="hidden" name="next" value="${next}" />
        <label for="username">User name</label>
        <input id="username" name="username" autocomplete="username" required value="${username}" autofocus />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <button type="submit">Sign in</button>
      </form>
      <p class="hint">
        First time? The daemon created user <code>admin</code> and wrote its password to <code>admin-password</code> in
        the data directory; <code>sitewarden users reset-password admin</code> sets a new one.
      </p>
    </section>`,
  );
}

export function createSignInRoutes({
  users,
  httpsPublicUrl,
  oidc,
}: {
  users: UsersService;
  httpsPublicUrl: boolean;
  /** Single sign-on, when SITEWARDEN_OIDC_ISSUER is set (single-sign-on.routes.ts). */
  oidc?: SingleSignOn;
}) {
  const app = new Hono<DashboardEnv>();
  app.get('/sign-in', (c) => c.html(signInForm({ next: safeNext(c.req.query('next')), sso: oidc })));
  /** A sign-in refused: 401 (wrong name or password) or 429 (limited, busy) with when to try again, the form again. */
  function refusal(c: Context, error: AppError, next: string, username: string) {
    const limited = error.problem !== usersProblems.signInFailed;
    if (limited) c.header('Retry-After', String(error.extensions?.retryAfter ?? 60));
    // Not gzipped: under a burst of wrong passwords, compressing each refusal cost the event loop more than the rest of it.
    c.header('Cache-Control', 'no-store, no-transform');
    return c.html(
      signInForm({ next, username, error: limited ? error.detail : 'Wrong user name or password.', sso: oidc }),
      limited ? 429 : 401,
    );
  }
  app.post('/sign-in', async (c) => {
    if (oidc && !oidc.localPasswords) return passwordSignInRefused(c);
    // The hashing pool full (a burst of sign-ins): refused before the body is read or the user looked up.
    const busy = users.signInBusy();
    if (busy) return refusal(c, busy, safeNext(undefined), '');
    const form = await c.req.parseBody();
    const username = typeof form.username === 'string' ? form.username : '';
    const password = typeof form.password === 'string' ? form.password : '';
    const next = safeNext(form.next);
    try {
      const signedIn = await users.signIn(username, password, clientAddress(c), c.req.header('user-agent'));
      // Two-factor on: no session yet; the code page (two-factor.page.ts) completes the sign-in.
      if ('twoFactor' in signedIn) return startSecondStep(c, signedIn.twoFactor, next, httpsPublicUrl);
      setSessionCookie(c, signedIn.token, signedIn.expiresAt, isSecure(c, httpsPublicUrl));
      return c.redirect(next, 303);
    } catch (error) {
      if (!isProblem(error, usersProblems.signInFailed, usersProblems.signInLimited, usersProblems.busy)) throw error;
      // Too many failures from here, or too many sign-ins at once: 429, and when to try again.
      return refusal(c, error, next, username);
    }
  });
  app.route('/', createTwoFactorSignInRoutes({ users, httpsPublicUrl }));
  if (oidc) app.route('/', createSingleSignOnRoutes({ oidc, httpsPublicUrl, safeNext }));
  app.post('/sign-out', requireSession(users, httpsPublicUrl), async (c) => {
    await users.signOut(c.get('session').sessionId);
    clearSessionCookie(c, isSecure(c, httpsPublicUrl));
    return c.redirect('/sign-in', 303);
  });
  return app;
}
