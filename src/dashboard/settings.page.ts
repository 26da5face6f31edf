import { Hono, type Context } from 'hono';
import { html } from 'hono/html';
import { isRole, type Role } from '../shared/actor.js';
import { commonProblems, isAppError } from '../shared/errors.js';
import { CreateWebhookInput } from '../webhooks/index.js';
import type { DashboardServices } from './deps.js';
import { page, type Html } from './layout.js';
import { setFlash, takeFlash, type DashboardEnv, type Flash } from './session.js';
import { createSessionsPages } from './sessions.page.js';
import { createAccountPage } from './settings-account.page.js';
import { text, type Form } from './settings-forms.js';
import { tokensSection } from './settings-tokens.view.js';
import { usersSection } from './settings-users.view.js';
import { webhooksSection } from './settings-webhooks.view.js';
import { createTwoFactorPages } from './two-factor.page.js';

/** The form's role (none: a viewer); anything else is refused by the users service (`role-invalid`). */
const roleOf = (form: Form) => (text(form, 'role') || 'viewer') as Role;

/**
 * Webhooks (with test send and delivery log), API tokens, users. Secrets made here are shown once, on the answer itself.
 * Each card is drawn by its own view (settings-*.view.ts); one's own account is settings-account.page.ts.
 */
export function createSettingsPage(deps: DashboardServices) {
  const app = new Hono<DashboardEnv>();

  async function render(
    c: Context<DashboardEnv>,
    options: { flash?: Flash | null; secret?: Html; status?: 200 | 201 | 400 } = {},
  ) {
    const session = c.get('session');
    const now = deps.clock.now().getTime();
    const webhooks = await deps.webhooks.list({ limit: 100 });
    const shownLog = c.req.query('deliveries');
    const log =
      shownLog && webhooks.some((w) => w.id === shownLog)
        ? await deps.webhooks.deliveries(shownLog, { limit: 20 })
        : null;
    const access = c.get('access');
    const isOwner = access.role === 'owner';
    const tokens = (await deps.tokens.listFor(access)).filter((t) => t.revokedAt === null);
    const users = await deps.users.list();
    const twoFactorRequired = isOwner && (await deps.users.twoFactor.required());
    const body = html`<h1>Settings</h1>
      ${options.secret ?? ''}
      <p>
        Signed in as <strong>${session.user.username}</strong> (${session.user.role}) ·
        <a href="/settings/account">Change your password</a>
      </p>
      ${isOwner ? webhooksSection(session, webhooks, log, now) : ''}
      ${tokensSection(session, access.role, tokens, users, now)}
      ${isOwner ? usersSection(session, users, twoFactorRequired, now) : ''}`;
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
  app.route('/', createAccountPage(deps));

  app.post('/settings/webhooks', (c) =>
    change(c, async (form) => {
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
      const created = await deps.webhooks.create(parsed.data);
      return `Webhook added for ${created.url}.`;
    }),
  );
  app.post('/settings/webhooks/:id/test', (c) =>
    change(c, async () => {
      await deps.webhooks.test(c.req.param('id'));
      return 'Test delivery queued; see the delivery log.';
    }),
  );
  app.post('/settings/webhooks/:id/delete', (c) =>
    change(c, async () => {
      await deps.webhooks.delete(c.req.param('id'));
      return 'Webhook deleted.';
    }),
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
      const { token } = await deps.tokens.createFor(c.get('access'), {
        name,
        role,
        userId,
        expiresAt:
          Number.isInteger(days) && days >= 1 && days <= 3650
            ? new Date(deps.clock.now().getTime() + days * 86_400_000)
            : null,
      });
      return await render(c, { secret: secretBox(`Token ${name} (${role})`, token), status: 201 });
    } catch (error) {
      // A name the tokens refuse (control characters): said on the page, not as the API's problem document.
      if (!isAppError(error)) throw error;
      return render(c, { flash: { kind: 'error', text: error.detail }, status: 400 });
    }
  });
  app.post('/settings/tokens/:id/revoke', (c) =>
    change(c, async () => `Token ${(await deps.tokens.revokeFor(c.get('access'), c.req.param('id'))).name} revoked.`),
  );
  app.post('/settings/users', (c) =>
    change(
      c,
      async (form) =>
        `User ${(await deps.users.create(text(form, 'username'), text(form, 'password'), roleOf(form))).username} added.`,
    ),
  );
  app.post('/settings/users/:id/role', (c) =>
    change(c, async (form) => {
      const user = await deps.users.setRole(c.req.param('id'), roleOf(form), c.get('actor'));
      return `${user.username} is now a ${user.role}; their sessions ended.`;
    }),
  );
  app.post('/settings/users/:id/scope', (c) =>
    change(c, async (form) => {
      const tags = text(form, 'tags')
        .split(',')
        .map((tag) => tag.trim())
        .filter((tag) => tag !== '');
      const user = await deps.users.setScope(c.req.param('id'), tags.length === 0 ? null : tags, c.get('actor'));
      return `${user.username} now sees ${user.scopeTags === null ? 'every site' : `the sites tagged ${user.scopeTags.join(', ')}`}; their sessions ended.`;
    }),
  );
  app.post('/settings/users/two-factor-required', (c) =>
    change(c, async (form) => {
      const required = await deps.users.twoFactor.setRequired(text(form, 'required') === 'yes', c.get('actor'));
      return required
        ? 'Two-factor sign-in is required: users without it are sent to set it up.'
        : 'Two-factor sign-in is no longer required.';
    }),
  );
  app.post('/settings/users/:id/two-factor/reset', (c) =>
    change(c, async () => {
      const id = c.req.param('id');
      await deps.users.twoFactor.reset(id, c.get('actor'));
      return `Two-factor of ${(await deps.users.find(id))?.username ?? id} is reset; they may set it up again.`;
    }),
  );
  app.route('/', createTwoFactorPages(deps));
  app.route('/', createSessionsPages(deps));
  app.post('/settings/users/:id/reset', async (c) => {
    const user = (await deps.users.list()).find((u) => u.id === c.req.param('id'));
    if (!user) return render(c, { flash: { kind: 'error', text: 'No such user.' } });
    const password = await deps.users.resetPassword(user.username);
    return render(c, { secret: secretBox(`New password of ${user.username}`, password) });
  });
  return app;
}
