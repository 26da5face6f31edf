import { html } from 'hono/html';
import type { SignedInSession } from '../users/index.js';
import type { DashboardServices } from './deps.js';
import { age, badge } from './format.js';
import { csrfField } from './layout.js';
import { postButton } from './settings-forms.js';

/** The settings page's webhooks card (the owner's): each webhook with test send, its delivery log, and the add form. */

type Webhook = Awaited<ReturnType<DashboardServices['webhooks']['list']>>[number];
type Delivery = Awaited<ReturnType<DashboardServices['webhooks']['deliveries']>>[number];

/** `log`: the deliveries of the webhook asked for (`?deliveries=`), or null when none is shown. */
export function webhooksSection(session: SignedInSession, webhooks: Webhook[], log: Delivery[] | null, now: number) {
  const post = (path: string, label: string, kind?: string) => postButton(session, path, label, '', kind);
  return html`<section class="card" id="webhooks" aria-labelledby="webhooks-h">
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
                        ${post(`/settings/webhooks/${w.id}/delete`, 'Delete', 'danger')}
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
}
