import { html } from 'hono/html';
import { roleAtLeast } from '../shared/actor.js';
import type { SignedInSession } from '../users/index.js';
import type { DashboardServices } from './deps.js';
import { age, badge } from './format.js';
import { action } from './layout.js';

/** The site page's backups card (`#backups`, refreshed live): the latest backups, and verify, download, restore. */

type Backup = Awaited<ReturnType<DashboardServices['backups']['list']>>[number];

const bytes = (n: number) =>
  n >= 1e9 ? `${(n / 1e9).toFixed(1)} GB` : n >= 1e6 ? `${(n / 1e6).toFixed(1)} MB` : `${Math.round(n / 1e3)} kB`;

export function backupsSection(session: SignedInSession, siteId: string, backups: Backup[], now: number) {
  const base = `/sites/${siteId}`;
  return html`<section class="card" id="backups" data-live-section aria-labelledby="backups-h">
    <h2 id="backups-h">Backups</h2>
    <div class="actions">${action(session, `${base}/backups`, 'Back up now')}</div>
    ${
      backups.length === 0
        ? html`<p class="muted">No backups yet.</p>`
        : html`<div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Started</th>
                  <th scope="col">Kind</th>
                  <th scope="col">State</th>
                  <th scope="col">Size</th>
                  <th scope="col">Held by</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                ${backups.map((b) => {
                  const usable = b.status === 'completed' || b.status === 'partial';
                  return html`<tr data-backup-id="${b.id}">
                    <td>${age(b.createdAt, now)}</td>
                    <td>${b.kind}</td>
                    <td>
                      ${badge(b.status)}
                      ${b.status === 'running' ? html`<span class="progress">${b.filesDone}/${b.files} files</span>` : ''}
                      ${b.error ? html`<span class="url">${b.error}</span>` : ''}
                    </td>
                    <td>${b.bytesTotal ? bytes(b.bytesTotal) : '—'}</td>
                    <td>${b.targets?.length ? b.targets.join(', ') : '—'}</td>
                    <td class="actions">
                      ${
                        usable
                          ? html`${action(session, `${base}/backups/${b.id}/verify`, 'Verify')}
                            ${roleAtLeast(session.user.role, 'manager') ? html`<a href="${base}/backups/${b.id}/download">Download</a>` : ''}
                            ${action(session, `${base}/backups/${b.id}/restore`, 'Restore', {
                              danger: true,
                              confirm: 'Overwrite the site with this backup',
                            })}`
                          : ''
                      }
                    </td>
                  </tr>`;
                })}
              </tbody>
            </table>
          </div>`
    }
  </section>`;
}
