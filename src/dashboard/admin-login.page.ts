import { Hono } from 'hono';
import { html } from 'hono/html';
import type { AdminLoginService } from '../admin-login/index.js';
import { isAppError } from '../shared/errors.js';
import type { SiteRow } from '../sites/index.js';
import type { SignedInSession } from '../users/index.js';
import type { DashboardServices } from './deps.js';
import { csrfField, page } from './layout.js';
import { setFlash, type DashboardEnv } from './session.js';

/**
 * One-click sign-in to a site's wp-admin. The button posts to the dashboard (the CSP lets forms
 * post only to this origin); the answer is a page of ours that moves the browser on to the
 * single-use link the site's connector minted, by a `Refresh` header, with a link for a browser
 * that does not follow it. The link is a secret: it is in that answer only (never cached), never
 * in a flash, a log or an event.
 */
export async function adminLoginAction(
  adminLogin: Pick<AdminLoginService, 'offered'>,
  session: SignedInSession,
  site: Pick<SiteRow, 'id' | 'state' | 'connectorVersion'>,
) {
  if (!(await adminLogin.offered(site))) return '';
  return html`<div class="actions site-actions">
    <form method="post" action="/sites/${site.id}/admin-login">
      ${csrfField(session)}
      <button type="submit">Sign in to wp-admin</button>
    </form>
  </div>`;
}

export function createAdminLoginPage(deps: Pick<DashboardServices, 'adminLogin'>) {
  const app = new Hono<DashboardEnv>();
  app.post('/sites/:id/admin-login', async (c) => {
    const id = c.req.param('id');
    let link;
    try {
      link = await deps.adminLogin.link(id, c.get('actor'));
    } catch (error) {
      if (!isAppError(error)) throw error;
      setFlash(c, { kind: 'error', text: `Could not sign in to wp-admin: ${error.detail}` });
      return c.redirect(`/sites/${encodeURIComponent(id)}`, 303);
    }
    // A URL's serialisation has no CR or LF: the header cannot be split.
    c.header('Refresh', `0; url=${link.url}`);
    c.header('Cache-Control', 'no-store');
    return c.html(
      page({
        title: 'Signing in to wp-admin',
        session: c.get('session'),
        current: '/',
        body: html`<h1>Signing in to wp-admin</h1>
          <p>Sitewarden is taking you to the site’s wp-admin. The sign-in link works once, within a minute.</p>
          <p><a class="button" href="${link.url}">Continue to wp-admin</a></p>
          <p><a href="/sites/${encodeURIComponent(id)}">Back to the site in Sitewarden</a></p>`,
      }),
    );
  });
  return app;
}
