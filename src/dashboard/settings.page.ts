import { Hono, type Context } from 'hono';
import { html } from 'hono/html';
import { isRole, roleAtLeast, roles, type Role } from '../shared/actor.js';
import { commonProblems, isAppError } from '../shared/errors.js';
import { CreateWebhookInput } from '../webhooks/index.js';
import type { DashboardServices } from './deps.js';
import { age, badge } from './format.js';
import { csrfField, page, type Html } from './layout.js';
import { setFlash, takeFlash, type DashboardEnv, type Flash } from './session.js';
import { createSessionsPages, ownSessionsSection } from './sessions.page.js';
import { createTwoFactorPages, twoFactorSection } from './two-factor.page.js';

type Form = Record<string, unknown>;
const text = (form: Form, name: string) => (typeof form[name] === 'string' ? (form[name] as string).trim() : '');
/** The form's role (none: a viewer); anything else is refused by the users service (`role-invalid`). */
const roleOf = (form: Form) => (text(form, 'role') || 'viewer') as Role;

/** Webhooks (with test send and delivery log), API tokens, users. Secrets made here are shown once, on the answer itself. */
export function createSettingsPage(deps: DashboardServices) {
  const app = new Hono<DashboardEnv>();

  function render(
    c: Context<DashboardEnv>,
    options: { flash?: Flash | null; secret?: Html; status?: 200 | 201 | 400 } = {},
  ) {
    const session = c.get('session');
    const now = deps.clock.now().getTime();
    const webhooks = deps.webhooks.list({ limit: 100 });
    const shownLog = c.req.query('deliveries');
    const log =
      shownLog && webhooks.some((w) => w.id === shownLog) ? deps.webhooks.deliveries(shownLog, { limit: 20 }) : null;
    const access = c.get('access');
    const isOwner = access.role === 'owner';
    const tokens = deps.tokens.listFor(access).filter((t) => t.revokedAt === null);
    const users = deps.users.list();
    const usernames = new Map(users.map((u) => [u.id, u.username]));
    // A token's role is at most its creator's: the choices stop at the user's own role.
    const tokenRoles = roles.filter((role) => role !== 'client' && roleAtLeast(access.role, role));
    const roleOptions = (choices: readonly Role[], selected: Role) =>
      choices.map((role) => html`<option value="${role}" ${role === selected ? 'selected' : ''}>${role}</option>`);
    const post = (path: string, label: string, extra: Html | string = '', kind = 'secondary') =>
      html`<form method="post" action="${path}">
        ${csrfField(session)}${extra}<button type="submit" class="${kind}">${label}</button>
      </form>`;
    const webhooksSection = () =>
      html`<section class="card" id="webhooks" aria-labelledby="webhooks-h">
        <h2 id="webhooks-h">Webhooks</h2>
        ${
          webhooks.length === 0
            ? html`<p class="muted">No webhooks: add one to hear about downtime, failed backups and more.</p>`
            : html`<div class="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">URL</th>
                      <th scope="col">Events</th>
                      <th scope="col">Format</th>
                      <th scope="col">Actions</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${webhooks.map(
                      (w) =>
                        html`<tr>
                          <th scope="row">${w.url}</th>
                          <td>${w.events.join(', ')}</td>
                          <td>${w.format}</td>
                          <td class="actions">
                            ${post(`/settings/webhooks/${w.id}/test`, 'Send a test')}
                            <a href="/settings?deliveries=${w.id}#deliveries">Delivery log</a>
                            ${post(`/settings/webhooks/${w.id}/delete`, 'Delete', '', 'danger')}
                          </td>
                        </tr>`,
                    )}
                  </tbody>
                </table>
              </div>`
        }
        ${
          log
            ? html`<h3 id="deliveries">Deliveries</h3>
                ${
                  log.length === 0
                    ? html`<p class="muted">No deliveries yet.</p>`
                    : html`<table>
                        <thead>
                          <tr>
                            <th scope="col">Event</th>
                            <th scope="col">State</th>
                            <th scope="col">Attempts</th>
                            <th scope="col">Last answer</th>
                            <th scope="col">Created</th>
                          </tr>
                        </thead>
                        <tbody>
                          ${log.map(
                            (d) =>
                              html`<tr>
                                <td>${d.event}</td>
                                <td>${badge(d.status)}</td>
                                <td class="num">${d.attempts}</td>
                                <td>${d.lastStatus ?? d.lastCause ?? '—'}</td>
                                <td>${age(d.createdAt, now)}</td>
                              </tr>`,
                          )}
                        </tbody>
                      </table>`
                }`
            : ''
        }
        <form class="connect" method="post" action="/settings/webhooks">
          <h3>Add a webhook</h3>
          ${csrfField(session)}
          <label for="wh-url">URL</label><input id="wh-url" name="url" type="url" required />
          <label for="wh-events">Events (comma separated, or *)</label
          ><input id="wh-events" name="events" value="*" required />
          <label for="wh-format">Format</label>
          <select id="wh-format" name="format">
            <option value="json">JSON</option>
            <option value="slack">Slack-style text</option>
          </select>
          <label for="wh-secret">Signing secret (optional, at least 16 characters)</label>
          <input id="wh-secret" name="secret" type="password" autocomplete="off" />
          <button type="submit">Add webhook</button>
        </form>
      </section>`;
    const body = html`<h1>Settings</h1>
      ${options.secret ?? ''}
      <p>
        Signed in as <strong>${session.user.username}</strong> (${session.user.role}) ·
        <a href="/settings/account">Change your password</a>
      </p>
      ${isOwner ? webhooksSection() : ''}
      <section class="card" id="tokens" aria-labelledby="tokens-h">
        <h2 id="tokens-h">API tokens</h2>
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Role</th>
                <th scope="col">User</th>
                <th scope="col">Starts with</th>
                <th scope="col">Last used</th>
                <th scope="col">Action</th>
              </tr>
            </thead>
            <tbody>
              ${tokens.map(
                (t) =>
                  html`<tr>
                    <th scope="row">${t.name}</th>
                    <td>${t.role}${t.expiresAt ? html` (expires ${t.expiresAt.toISOString().slice(0, 10)})` : ''}</td>
                    <td>${t.userId ? (usernames.get(t.userId) ?? t.userId) : 'operator (CLI)'}</td>
                    <td><code>${t.prefix}…</code></td>
                    <td>${age(t.lastUsedAt, now)}</td>
                    <td class="actions">
                      ${post(`/settings/tokens/${t.id}/revoke`, `Revoke ${t.name}`, '', 'danger')}
                    </td>
                  </tr>`,
              )}
            </tbody>
          </table>
        </div>
        <form class="connect" method="post" action="/settings/tokens">
          <h3>Create a token</h3>
          ${csrfField(session)}
          <label for="tok-name">Name</label><input id="tok-name" name="name" required maxlength="100" />
          <label for="tok-role">Role</label>
          <select id="tok-role" name="role">
            ${roleOptions(tokenRoles, 'viewer')}
          </select>
          ${
            isOwner
              ? html`<label for="tok-user">For user</label>
                  <select id="tok-user" name="userId">
                    ${users.map(
                      (u) =>
                        html`<option value="${u.id}" ${u.id === session.user.id ? 'selected' : ''}>
                          ${u.username}
                        </option>`,
                    )}
                  </select>`
              : ''
          }
          <label for="tok-days">Expires after (days, empty: never)</label>
          <input id="tok-days" name="expiresInDays" type="number" min="1" max="3650" />
          <button type="submit">Create token</button>
        </form>
      </section>
      ${isOwner ? usersSection() : ''}`;
    function usersSection() {
      return html`<section class="card" id="users" aria-labelledby="users-h">
        <h2 id="users-h">Users</h2>
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">User</th>
                <th scope="col">Role</th>
                <th scope="col">Sites</th>
                <th scope="col">Last sign-in</th>
                <th scope="col">Two-factor</th>
                <th scope="col">Action</th>
              </tr>
            </thead>
            <tbody>
              ${users.map(
                (u) =>
                  html`<tr>
                    <th scope="row">${u.username}</th>
                    <td>${u.role}</td>
                    <td>
                      ${u.scopeTags === null ? 'all' : `tagged ${u.scopeTags.join(', ') || '(none)'}`}
                      ${
                        u.role === 'owner'
                          ? ''
                          : post(
                              `/settings/users/${u.id}/scope`,
                              `Set sites of ${u.username}`,
                              html`<label class="visually-hidden" for="scope-${u.id}"
                                  >Scope tags of ${u.username} (comma-separated; empty: every site)</label
                                ><input
                                  id="scope-${u.id}"
                                  name="tags"
                                  value="${u.scopeTags?.join(', ') ?? ''}"
                                  placeholder="every site"
                                />`,
                            )
                      }
                    </td>
                    <td>${age(u.lastSignedInAt, now)}</td>
                    <td>${u.twoFactorEnabled ? 'on' : 'off'}</td>
                    <td class="actions">
                      ${post(
                        `/settings/users/${u.id}/role`,
                        `Change role of ${u.username}`,
                        html`<label class="visually-hidden" for="role-${u.id}">Role of ${u.username}</label>
                          <select id="role-${u.id}" name="role">
                            ${roleOptions(roles, u.role)}
                          </select>`,
                      )}
                      ${post(`/settings/users/${u.id}/reset`, `Reset password of ${u.username}`)}
                      ${
                        u.twoFactorEnabled
                          ? post(`/settings/users/${u.id}/two-factor/reset`, `Reset two-factor of ${u.username}`)
                          : ''
                      }
                      <a href="/settings/users/${u.id}/sessions">Sessions of ${u.username}</a>
                    </td>
                  </tr>`,
              )}
            </tbody>
          </table>
        </div>
        <form class="connect" method="post" action="/settings/users/two-factor-required">
          <h3>Two-factor sign-in</h3>
          ${csrfField(session)}
          <label class="check"
            ><input type="checkbox" name="required" value="yes" ${deps.users.twoFactor.required() ? 'checked' : ''} />
            Required of every user (one without it is sent to set it up at sign-in; API tokens keep working)</label
          >
          <button type="submit" class="secondary">Save</button>
        </form>
        <form class="connect" method="post" action="/settings/users">
          <h3>Add a user</h3>
          ${csrfField(session)}
          <label for="user-name">User name or email</label
          ><input id="user-name" name="username" required autocomplete="off" />
          <label for="user-password">Password (at least 12 characters)</label>
          <input
            id="user-password"
            name="password"
            type="password"
            required
            minlength="12"
            autocomplete="new-password"
          />
          <label for="user-role">Role</label>
          <select id="user-role" name="role">
            ${roleOptions(roles, 'viewer')}
          </select>
          <button type="submit">Add user</button>
        </form>
      </section>`;
    }
    return c.html(
      page({ title: 'Settings', session, current: '/settings', body, flash: options.flash ?? takeFlash(c) }),
      options.status ?? 200,
    );
  }

  /** Runs a change; a problem the user caused is shown on the page, the rest goes to the error handler. */
  async function change(c: Context<DashboardEnv>, work: (form: Form) => Promise<string> | string) {
    const form = await c.req.parseBody();
    try {
      setFlash(c, { kind: 'ok', text: await work(form) });
    } catch (error) {
      if (!isAppError(error)) throw error;
      setFlash(c, { kind: 'error', text: error.detail });
    }
    return c.redirect('/settings', 303);
  }

  const secretBox = (title: string, value: string) =>
    html`<section class="card secret" role="status">
      <h2>${title}</h2>
      <p>Copy it now: it is shown only this once.</p>
      <p><code class="secret-value">${value}</code></p>
    </section>`;

  app.get('/settings', (c) => render(c));

  /** One's own account, for every role (a client's too): the password, with the current one asked first. */
  function accountPage(c: Context<DashboardEnv>, flash: Flash | null = takeFlash(c), status: 200 | 400 = 200) {
    const session = c.get('session');
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
      ${twoFactorSection(deps, c)} ${ownSessionsSection(deps, c)}`;
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

  app.post('/settings/webhooks', (c) =>
    change(c, (form) => {
      const parsed = CreateWebhookInput.safeParse({
        url: text(form, 'url'),
        events: text(form, 'events')
          .split(',')
          .map((e) => e.trim())
          .filter(Boolean),
        format: text(form, 'format') || 'json',
        ...(text(form, 'secret') ? { secret: text(form, 'secret') } : {}),
      });
      if (!parsed.success) throw commonProblems.validation.create(parsed.error.issues[0]?.message ?? 'invalid webhook');
      const created = deps.webhooks.create(parsed.data);
      return `Webhook added for ${created.url}.`;
    }),
  );
  app.post('/settings/webhooks/:id/test', (c) =>
    change(c, () => (deps.webhooks.test(c.req.param('id')), 'Test delivery queued; see the delivery log.')),
  );
  app.post('/settings/webhooks/:id/delete', (c) =>
    change(c, () => (deps.webhooks.delete(c.req.param('id')), 'Webhook deleted.')),
  );
  app.post('/settings/tokens', async (c) => {
    const form = await c.req.parseBody();
    const name = text(form, 'name').slice(0, 100);
    const asked = text(form, 'role') || 'viewer';
    const role = isRole(asked) ? asked : 'viewer';
    const days = Number(text(form, 'expiresInDays'));
    const userId = text(form, 'userId') || undefined;
    if (!name) return render(c, { flash: { kind: 'error', text: 'A token needs a name.' } });
    try {
      const { token } = deps.tokens.createFor(c.get('access'), {
        name,
        role,
        userId,
        expiresAt:
          Number.isInteger(days) && days >= 1 && days <= 3650
            ? new Date(deps.clock.now().getTime() + days * 86_400_000)
            : null,
      });
      return render(c, { secret: secretBox(`Token ${name} (${role})`, token), status: 201 });
    } catch (error) {
      // A name the tokens refuse (control characters): said on the page, not as the API's problem document.
      if (!isAppError(error)) throw error;
      return render(c, { flash: { kind: 'error', text: error.detail }, status: 400 });
    }
  });
  app.post('/settings/tokens/:id/revoke', (c) =>
    change(c, () => `Token ${deps.tokens.revokeFor(c.get('access'), c.req.param('id')).name} revoked.`),
  );
  app.post('/settings/users', (c) =>
    change(
      c,
      async (form) =>
        `User ${(await deps.users.create(text(form, 'username'), text(form, 'password'), roleOf(form))).username} added.`,
    ),
  );
  app.post('/settings/users/:id/role', (c) =>
    change(c, (form) => {
      const user = deps.users.setRole(c.req.param('id'), roleOf(form), c.get('actor'));
      return `${user.username} is now a ${user.role}; their sessions ended.`;
    }),
  );
  app.post('/settings/users/:id/scope', (c) =>
    change(c, (form) => {
      const tags = text(form, 'tags')
        .split(',')
        .map((tag) => tag.trim())
        .filter((tag) => tag !== '');
      const user = deps.users.setScope(c.req.param('id'), tags.length === 0 ? null : tags, c.get('actor'));
      return `${user.username} now sees ${user.scopeTags === null ? 'every site' : `the sites tagged ${user.scopeTags.join(', ')}`}; their sessions ended.`;
    }),
  );
  app.post('/settings/users/two-factor-required', (c) =>
    change(c, (form) => {
      const required = deps.users.twoFactor.setRequired(text(form, 'required') === 'yes', c.get('actor'));
      return required
        ? 'Two-factor sign-in is required: users without it are sent to set it up.'
        : 'Two-factor sign-in is no longer required.';
    }),
  );
  app.post('/settings/users/:id/two-factor/reset', (c) =>
    change(c, () => {
      const id = c.req.param('id');
      deps.users.twoFactor.reset(id, c.get('actor'));
      return `Two-factor of ${deps.users.find(id)?.username ?? id} is reset; they may set it up again.`;
    }),
  );
  app.route('/', createTwoFactorPages(deps));
  app.route('/', createSessionsPages(deps));
  app.post('/settings/users/:id/reset', async (c) => {
    const user = deps.users.list().find((u) => u.id === c.req.param('id'));
    if (!user) return render(c, { flash: { kind: 'error', text: 'No such user.' } });
    const password = await deps.users.resetPassword(user.username);
    return render(c, { secret: secretBox(`New password of ${user.username}`, password) });
  });
  return app;
}
