import { html } from 'hono/html';
import type { SignedInSession } from '../users/index.js';
import type { DashboardServices } from './deps.js';
import { action, csrfField } from './layout.js';

/**
 * The Backups page's retention card (`#retention`): the default retention and each tag's, field by
 * field, with a Remove button per tag, and the form that sets a tag's retention (whose fields the
 * page's route reads back by the same names).
 */

type RetentionView = Awaited<ReturnType<DashboardServices['backups']['retention']['view']>>;

export const RETENTION_FIELDS = [
  ['keepLast', 'Keep the last'],
  ['keepDays', 'Keep all younger than (days)'],
  ['keepDaily', 'Daily'],
  ['keepWeekly', 'Weekly'],
  ['keepMonthly', 'Monthly'],
  ['keepYearly', 'Yearly'],
] as const;

export function retentionSection(session: SignedInSession, { defaults, tags }: RetentionView) {
  const cell = (value: number | null) => (value === null ? html`<span class="muted">default</span>` : String(value));
  return html`<section class="card" id="retention" aria-labelledby="retention-h">
    <h2 id="retention-h">Retention per tag</h2>
    <p class="muted">
      A site keeps, field by field, its own setting, else the largest its tags set here, else the default. Daily,
      weekly, monthly, yearly: the newest backup of each of the last that many periods.
    </p>
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Tag</th>
            ${RETENTION_FIELDS.map(([, label]) => html`<th scope="col">${label}</th>`)}
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          <tr>
            <th scope="row">Default</th>
            ${RETENTION_FIELDS.map(([field]) => html`<td class="num">${defaults[field]}</td>`)}
            <td></td>
          </tr>
          ${tags.map(
            (row) =>
              html`<tr>
                <th scope="row"><a class="tag" href="/?tag=${encodeURIComponent(row.tag)}">${row.tag}</a></th>
                ${RETENTION_FIELDS.map(([field]) => html`<td class="num">${cell(row[field])}</td>`)}
                <td class="actions">
                  ${action(session, `/backups/retention/${encodeURIComponent(row.tag)}/delete`, 'Remove', {
                    danger: true,
                    confirm: 'Confirm',
                  })}
                </td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
    <h3>Set a tag’s retention</h3>
    <form class="settings-form" method="post" action="/backups/retention">
      ${csrfField(session)}
      <div><label for="retention-tag">Tag</label><input id="retention-tag" name="tag" required maxlength="64" /></div>
      ${RETENTION_FIELDS.map(
        ([field, label]) =>
          html`<div>
            <label for="retention-${field}">${label}</label
            ><input id="retention-${field}" name="${field}" type="number" min="0" placeholder="default" />
          </div>`,
      )}
      <div><button type="submit">Save retention</button></div>
    </form>
  </section>`;
}
