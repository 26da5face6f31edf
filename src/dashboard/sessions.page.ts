import { Hono, type Context } from 'hono';
import { html } from 'hono/html';
import { isAppError } from '../shared/errors.js';
import type { SessionSummary } from '../users/index.js';
import type { DashboardServices } from './deps.js';
import { age } from './format.js';
import { csrfField, page, type Html } from './layout.js';
import { clearSessionCookie, isSecure, setFlash, takeFlash, type DashboardEnv } from './session.js';

/**
 * A user's sessions as a table: when each began, when it was last seen, from where and in which
 * browser; each with Revoke (posting to `${base}/SESSION/revoke`), the current one marked instead.
 */
function sessionsTable(
  c: Context<DashboardEnv>,
  sessions: SessionSummary[],
  base: string,
  now: number,
  owner?: string,
): Html {
  const session = c.get('session');
  if (sessions.length === 0) return html`<p class="muted">No open sessions.</p>`;
  return html`<div class="table-wrap">
    <table class="sessions">
      <thead>
        <tr>
          <th scope="col">Signed in</th>
          <th scope="col">Last seen</th>
          <th scope="col">Address</th>
          <th scope="col">Browser</th>
          <th scope="col">Action</th>
        </tr>
      </thead>
      <tbody>
        ${sessions.map(
          (s) =>
            html`<tr>
              <td>${age(s.createdAt, now)}</td>
              <td>${age(s.lastSeenAt, now)}</td>
              <td>${s.address ?? '—'}</td>
              <td class="user-agent">${s.userAgent ?? '—'}</td>
              <td class="actions">
                ${
                  s.current
                    ? html`<strong>This session</strong>`
                    : html`<form method="post" action="${base}/${s.id}/revoke">
                        ${csrfField(session)}
                        <button type="submit" class="danger">
                          Revoke<span class="visually-hidden">
                            the session ${owner ? `of ${owner} ` : ''}signed in ${age(s.createdAt, now)}</span
                          >
                        </button>
                      </form>`
                }
              </td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

/** The account page's sessions section: one's own, with Revoke and "Sign out everywhere else". */
export async function ownSessionsSection(deps: DashboardServices, c: Context<DashboardEnv>): Promise<Html> {
  const session = c.get('session');
  const sessions = await deps.users.listSessions(session.user.id, session.sessionId);
  return html`<section class="card" id="sessions" aria-labelledby="sessions-h">
    <h2 id="sessions-h">Your sessions</h2>
    ${sessionsTable(c, sessions, '/settings/account/sessions', deps.clock.now().getTime())}
    ${
      sessions.length > 1
        ? html`<form method="post" action="/settings/account/sessions/revoke-others">
            ${csrfField(session)}<button type="submit" class="danger">Sign out everywhere else</button>
          </form>`
        : ''
    }
  </section>`;
}

/** Revoking one's own sessions (account page) and, for owners, any user's (Settings → Users). */
export function createSessionsPages(deps: DashboardServices) {
  const app = new Hono<DashboardEnv>();
  const by = (c: Context<DashboardEnv>) => c.get('actor');

  async function outcome(c: Context<DashboardEnv>, back: string, work: () => Promise<string>) {
    try {
      setFlash(c, { kind: 'ok', text: await work() });
    } catch (error) {
      if (!isAppError(error)) throw error;
      setFlash(c, { kind: 'error', text: error.detail });
    }
    return c.redirect(back, 303);
  }

  app.post('/settings/account/sessions/revoke-others', (c) => {
    const session = c.get('session');
    return outcome(c, '/settings/account#sessions', async () => {
      const ended = await deps.users.revokeOtherSessions(session.user.id, session.sessionId, by(c));
      return `${ended} other session${ended === 1 ? '' : 's'} ended.`;
    });
  });
  app.post('/settings/account/sessions/:sessionId/revoke', async (c) => {
    const session = c.get('session');
    const sessionId = c.req.param('sessionId');
    if (sessionId === session.sessionId) {
      // Revoking the session asking is signing out.
      await deps.users.signOut(sessionId);
      clearSessionCookie(c, isSecure(c, deps.httpsPublicUrl));
      return c.redirect('/sign-in', 303);
    }
    return outcome(c, '/settings/account#sessions', async () => {
      await deps.users.revokeSession(session.user.id, sessionId, by(c));
      return 'The session ended.';
    });
  });

  // An owner's view of one user's sessions (permissions.ts: owners only).
  app.get('/settings/users/:id/sessions', async (c) => {
    const session = c.get('session');
    const user = await deps.users.find(c.req.param('id'));
    if (!user)
      return c.html(
        page({ title: 'No such user', session, current: '/settings', body: html`<h1>No such user</h1>` }),
        404,
      );
    const base = `/settings/users/${user.id}/sessions`;
    const sessions = await deps.users.listSessions(user.id, session.sessionId);
    const body = html`<h1>Sessions of ${user.username}</h1>
      <p><a href="/settings#users">Back to users</a></p>
      <section class="card" aria-label="Sessions">
        ${sessionsTable(c, sessions, base, deps.clock.now().getTime(), user.username)}
        ${
          sessions.some((s) => !s.current)
            ? html`<form method="post" action="${base}/revoke-all">
                ${csrfField(session)}<button type="submit" class="danger">Sign ${user.username} out everywhere</button>
              </form>`
            : ''
        }
      </section>`;
    return c.html(
      page({ title: `Sessions of ${user.username}`, session, current: '/settings', body, flash: takeFlash(c) }),
    );
  });
  app.post('/settings/users/:id/sessions/revoke-all', (c) => {
    const id = c.req.param('id');
    const session = c.get('session');
    return outcome(c, `/settings/users/${id}/sessions`, async () => {
      // An owner signing themselves out everywhere keeps the session asking.
      const keep = id === session.user.id ? session.sessionId : null;
      const ended = await deps.users.revokeOtherSessions(id, keep, by(c));
      return `${ended} session${ended === 1 ? '' : 's'} ended.`;
    });
  });
  app.post('/settings/users/:id/sessions/:sessionId/revoke', (c) => {
    const id = c.req.param('id');
    return outcome(c, `/settings/users/${id}/sessions`, async () => {
      await deps.users.revokeSession(id, c.req.param('sessionId'), by(c));
      return 'The session ended.';
    });
  });
  return app;
}
