import { html } from 'hono/html';
import { roleAtLeast, roles, type Role } from '../shared/actor.js';
import type { SignedInSession } from '../users/index.js';
import type { DashboardServices } from './deps.js';
import { age } from './format.js';
import { csrfField } from './layout.js';
import { postButton, roleOptions } from './settings-forms.js';

/** The settings page's API tokens card: the tokens the user may see, revoke buttons, and the create form. */

type Token = Awaited<ReturnType<DashboardServices['tokens']['listFor']>>[number];
type User = Awaited<ReturnType<DashboardServices['users']['list']>>[number];

/**
 * `role`: the signed-in user's, the most a token made here may have. `users`: every user, to name a
 * token's owner; an owner may also make a token for any of them.
 */
export function tokensSection(session: SignedInSession, role: Role, tokens: Token[], users: User[], now: number) {
  const isOwner = role === 'owner';
  const usernames = new Map(users.map((u) => [u.id, u.username]));
  // A token's role is at most its creator's: the choices stop at the user's own role.
  const tokenRoles = roles.filter((choice) => choice !== 'client' && roleAtLeast(role, choice));
  return html`<section class="card" id="tokens" aria-labelledby="tokens-h">
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
                  ${postButton(session, `/settings/tokens/${t.id}/revoke`, `Revoke ${t.name}`, '', 'danger')}
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
                    html`<option value="${u.id}" ${u.id === session.user.id ? 'selected' : ''}>${u.username}</option>`,
                )}
              </select>`
          : ''
      }
      <label for="tok-days">Expires after (days, empty: never)</label>
      <input id="tok-days" name="expiresInDays" type="number" min="1" max="3650" />
      <button type="submit">Create token</button>
    </form>
  </section>`;
}
