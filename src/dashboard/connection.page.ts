import { Hono } from 'hono';
import { html } from 'hono/html';
import type { AppError } from '../shared/errors.js';
import { sitesProblems } from '../sites/index.js';
import type { DashboardServices } from './deps.js';
import { action, csrfField, page, publicPage } from './layout.js';
import { flashOutcome, type DashboardEnv } from './session.js';
import type { SignedInSession } from '../users/index.js';
import type { SiteRow } from '../sites/index.js';

/**
 * Connecting a site by approval, as a browser lives it: the dashboard sends the user to the
 * site's own approval screen (a page that moves on by itself, since the dashboard's CSP lets
 * forms post only to this origin), and WordPress sends them back through the API's callback to
 * the result page here, on a URL that holds no password.
 */
export const CONNECTION_RESULT_PATH = '/connect/result';

/** The sites problems a failed approval ends in, by type: the result page says what happened and what to do. */
const FAILURES: Record<string, { title: string; advice: string }> = {
  'authorization-rejected': {
    title: 'The connection was not approved',
    advice: 'The site’s administrator chose not to approve it. Connect the site again to ask once more.',
  },
  'authorization-expired': {
    title: 'The approval came too late',
    advice: 'Approval links are valid for a limited time. Connect the site again for a new one.',
  },
  'authorization-unknown': {
    title: 'This approval link is unknown or was already used',
    advice: 'If the site is not connected yet, connect it again from the dashboard.',
  },
  'authorization-site-mismatch': {
    title: 'The approval came from another site',
    advice: 'WordPress named a different address than the one being connected. Connect the site by its own address.',
  },
};

/** The result page's address for the callback's outcome; only a site id or a problem type goes in it. */
export function connectionResultUrl(outcome: { siteId: string } | { problem: AppError }): string {
  const query =
    'siteId' in outcome
      ? new URLSearchParams({ site: outcome.siteId })
      : new URLSearchParams({ problem: outcome.problem.problem.name, ...siteOf(outcome.problem) });
  return `${CONNECTION_RESULT_PATH}?${query.toString()}`;
}

const siteOf = (error: AppError): Record<string, string> => {
  const siteId = error.extensions?.siteId;
  return typeof siteId === 'string' ? { site: siteId } : {};
};

/** The page that moves the browser on to the site's authorize-application screen (and its way back, if it does not). */
function approvalRedirect(siteUrl: string, authorizeUrl: string) {
  return html`<h1>Approve the connection on the site</h1>
    <p>
      Sitewarden is taking you to <strong>${siteUrl}</strong>, where an administrator of the site approves the
      connection. You come back here afterwards.
    </p>
    <p><a class="button" href="${authorizeUrl}">Continue to the approval page</a></p>`;
}

/**
 * What the site's page says about its connection, with the actions that fit: a pending site's
 * approval page again or cancel; a failed connection's reason, connect again or remove; a
 * connected site's refresh and disconnect.
 */
export function connectionPanel(session: SignedInSession, site: SiteRow, now: Date) {
  const base = `/sites/${site.id}`;
  const remove = (label: string, confirm: string) =>
    action(session, `${base}/disconnect`, label, { danger: true, confirm });
  if (site.state === 'connected')
    return html`<div class="actions site-actions">
      ${action(session, `${base}/refresh`, 'Refresh now')}
      ${remove('Disconnect', 'Remove this site from Sitewarden (its backups stay until pruned)')}
    </div>`;
  if (site.state === 'pending') {
    const expired = site.authorizationExpiresAt !== null && site.authorizationExpiresAt <= now;
    return html`<section class="card notice" aria-labelledby="connection-h">
      <h2 id="connection-h">Waiting for approval</h2>
      ${
        expired
          ? html`<p>The approval window has passed. Cancel, then connect the site again.</p>`
          : html`<p>
              An administrator of the site has to approve the connection on the site’s own approval page.
              <a href="${base}/approve">Open the approval page again</a>
            </p>`
      }
      <div class="actions">${remove('Cancel the connection', 'Cancel connecting this site')}</div>
    </section>`;
  }
  return html`<section class="card notice" aria-labelledby="connection-h">
    <h2 id="connection-h">Not connected</h2>
    <p>${site.stateReason ?? 'The connection did not complete.'}</p>
    <div class="actions">
      <form method="post" action="/sites/connect">
        ${csrfField(session)}<input type="hidden" name="url" value="${site.url}" />
        <button type="submit">Connect again</button>
      </form>
      ${remove('Remove', 'Remove this site from Sitewarden')}
    </div>
  </section>`;
}

export function createConnectionPages(deps: Pick<DashboardServices, 'sites' | 'clock' | 'fleetRefresh'>) {
  const signedIn = new Hono<DashboardEnv>();
  signedIn.get('/sites/:id/approve', async (c) => {
    const site = await deps.sites.find(c.req.param('id'));
    const open =
      site?.state === 'pending' &&
      site.authorizationUrl !== null &&
      (site.authorizationExpiresAt === null || site.authorizationExpiresAt > deps.clock.now());
    if (!site || !open) return c.redirect(site ? `/sites/${site.id}` : '/', 303);
    c.header('Refresh', `0; url=${site.authorizationUrl}`);
    return c.html(
      page({
        title: 'Approve the connection',
        session: c.get('session'),
        current: '/',
        body: approvalRedirect(site.url, site.authorizationUrl!),
      }),
    );
  });

  signedIn.post('/sites/:id/disconnect', async (c) => {
    const site = await deps.sites.find(c.req.param('id'));
    const form = await c.req.parseBody();
    await flashOutcome(c, async () => {
      if (form.confirm !== 'yes') return 'Nothing removed: tick the box to confirm.';
      if (!site) throw sitesProblems.notFound.create(`no site has the id ${c.req.param('id')}`);
      await deps.sites.disconnect(site.id);
      return `Removed ${site.url} from Sitewarden.`;
    });
    return c.redirect('/', 303);
  });
  signedIn.post('/sites/:id/refresh', async (c) => {
    const id = c.req.param('id');
    await flashOutcome(c, async () => {
      await deps.fleetRefresh.refresh({ sites: [id], tag: [] });
      return 'Reading the site’s plugins, themes and updates again; the page shows them once done.';
    });
    return c.redirect(`/sites/${encodeURIComponent(id)}`, 303);
  });
  signedIn.post('/sites/refresh', async (c) => {
    await flashOutcome(c, async () => {
      // Sites already queued for a read are counted too: each is read once, soon.
      const { selected } = await deps.fleetRefresh.refresh({ all: true, tag: [] });
      return `Reading ${selected} connected ${selected === 1 ? 'site' : 'sites'} again (plugins, themes, updates offered).`;
    });
    return c.redirect('/', 303);
  });

  // Public: WordPress's redirect brings no session cookie (it is SameSite=Strict), and the
  // approving administrator may not be a Sitewarden user. The link to the site is the way in.
  const result = new Hono();
  result.get(CONNECTION_RESULT_PATH, async (c) => {
    const siteId = c.req.query('site');
    const problem = c.req.query('problem');
    const site = siteId ? await deps.sites.find(siteId) : undefined;
    if (!problem && site?.state === 'connected')
      return c.html(
        publicPage(
          'Site connected',
          html`<section class="result">
            <h1>Site connected</h1>
            <p><strong>${site.url}</strong> is now connected to Sitewarden.</p>
            <p><a class="button" href="/sites/${site.id}">Open the site in Sitewarden</a></p>
          </section>`,
        ),
      );
    const failure = (problem && FAILURES[problem]) || {
      title: 'The site could not be connected',
      advice:
        'Sitewarden could not use the approval it was given. The site’s page in the dashboard says why; connect it again from there.',
    };
    return c.html(
      publicPage(
        failure.title,
        html`<section class="result">
          <h1>${failure.title}</h1>
          <p>${failure.advice}</p>
          <p><a href="${site ? `/sites/${site.id}` : '/'}">Back to Sitewarden</a></p>
        </section>`,
      ),
      problem ? 400 : 404,
    );
  });
  return { signedIn, result };
}
