import { html } from 'hono/html';
import type { DashboardServices } from './deps.js';
import { age, badge, triggerLabel } from './format.js';
import { columns } from './layout.js';

const LISTED = 20;

/** A site's update history on its page: each attempt, newest first, who asked and how it ended. */
export function updateHistorySection(bulkUpdates: DashboardServices['bulkUpdates'], siteId: string, now: number) {
  const attempts = bulkUpdates.history({ siteId, limit: LISTED });
  return html`<section class="card" id="update-history" aria-labelledby="update-history-h">
    <h2 id="update-history-h">Update history</h2>
    ${
      attempts.length === 0
        ? html`<p class="muted">No update yet: updates from this page, bulk updates and policies are listed here.</p>`
        : html`<div class="table-wrap">
            <table>
              ${columns('Item', 'Version', 'Result', 'Asked by', 'When')}
              <tbody>
                ${attempts.map(
                  (row) =>
                    html`<tr>
                      <th scope="row">${row.slug ? `${row.slug} (${row.type})` : row.type}</th>
                      <td>${row.fromVersion ?? '?'} → ${row.toVersion ?? '?'}</td>
                      <td>
                        ${badge(row.result)}
                        ${row.reason ? html`<span class="url">${row.reason}${row.error ? `: ${row.error}` : ''}</span>` : ''}
                      </td>
                      <td>${triggerCell(row)}</td>
                      <td>${age(row.startedAt, now)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
  </section>`;
}

/** Who started the attempt, linked to its bulk run when it was one. */
function triggerCell(row: { jobId: string | null; triggerKind: string; triggerId: string | null }) {
  const label = triggerLabel({ kind: row.triggerKind, id: row.triggerId });
  return row.jobId?.startsWith('bulk_') ? html`<a href="/updates/runs/${row.jobId}">${label}</a>` : label;
}
