import { Hono, type Context } from 'hono';
import { html } from 'hono/html';
import { isAppError } from '../shared/errors.js';
import type { DashboardServices } from './deps.js';
import { csrfField, page } from './layout.js';
import { setFlash, takeFlash, type DashboardEnv, type Flash } from './session.js';
import { ownSessionsSection } from './sessions.page.js';
import { text } from './settings-forms.js';
import { twoFactorSection } from './two-factor.page.js';

/**
 * One's own account (`/settings/account`), for every role (a client's too): the password, with the
 * current one asked first, then one's two-factor sign-in and sessions.
 */
export function createAccountPage(deps: DashboardServices) {
  const app = new Hono<DashboardEnv>();

  async function accountPage(c: Context<DashboardEnv>, flash: Flash | null = takeFlash(c), status: 200 | 400 = 200) {
    const session = c.get('session');
    const [twoFactor, sessions] = [await twoFactorSection(deps, c), await ownSessionsSection(deps, c)];
    const body = html`<h1>Your account</h1>
      <p><strong>${session.user.username}</strong>, ${session.user.role}</p>
      <form class="connect" method="post" action="/settings/account/password">
        <h2>Change your password</h2>
        ${csrfField(session)}
        <label for="pw-current">Current password</label>
        <input id="pw-current" name="current" type="password" required autocomplete="current-password" />
        <label for="pw-new">New password (at least 12 characters)</label>
        <input id="pw-new" name="password" type="password" required minlength="12" autocomplete="new-password" />
        <p class="muted">Your other sessions end; this one stays signed in.</p>
        <button type="submit">Change password</button>
      </form>
      ${twoFactor} ${sessions}`;
    return c.html(page({ title: 'Your account', session, current: '/settings', body, flash }), status);
  }

  app.get('/settings/account', (c) => accountPage(c));
  app.post('/settings/account/password', async (c) => {
    const form = await c.req.parseBody();
    const session = c.get('session');
    try {
      await deps.users.changeOwnPassword(
        session.user.id,
        session.sessionId,
        text(form, 'current'),
        text(form, 'password'),
      );
    } catch (error) {
      if (!isAppError(error)) throw error;
      return accountPage(c, { kind: 'error', text: error.detail }, 400);
    }
    setFlash(c, { kind: 'ok', text: 'Your password is changed; your other sessions ended.' });
    return c.redirect('/settings/account', 303);
  });
  return app;
}
