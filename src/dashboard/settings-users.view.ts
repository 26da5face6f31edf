import { html } from 'hono/html';
import { roles } from '../shared/actor.js';
import type { SignedInSession } from '../users/index.js';
import type { DashboardServices } from './deps.js';
import { age } from './format.js';
import { csrfField } from './layout.js';
import { postButton, roleOptions } from './settings-forms.js';

/**
 * The settings page's users card (the owner's): each user's role, sites and two-factor with their
 * actions, whether two-factor is required of everyone, and the add form.
 */

type User = Awaited<ReturnType<DashboardServices['users']['list']>>[number];

export function usersSection(session: SignedInSession, users: User[], twoFactorRequired: boolean, now: number) {
  const post = (path: string, label: string, extra?: Parameters<typeof postButton>[3]) =>
    postButton(session, path, label, extra);
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
        ><input type="checkbox" name="required" value="yes" ${twoFactorRequired ? 'checked' : ''} /> Required of every
        user (one without it is sent to set it up at sign-in; API tokens keep working)</label
      >
      <button type="submit" class="secondary">Save</button>
    </form>
    <form class="connect" method="post" action="/settings/users">
      <h3>Add a user</h3>
      ${csrfField(session)}
      <label for="user-name">User name or email</label
      ><input id="user-name" name="username" required autocomplete="off" />
      <label for="user-password">Password (at least 12 characters)</label>
      <input id="user-password" name="password" type="password" required minlength="12" autocomplete="new-password" />
      <label for="user-role">Role</label>
      <select id="user-role" name="role">
        ${roleOptions(roles, 'viewer')}
      </select>
      <button type="submit">Add user</button>
    </form>
  </section>`;
}
