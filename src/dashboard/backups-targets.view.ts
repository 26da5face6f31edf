import { html } from 'hono/html';
import type { SignedInSession } from '../users/index.js';
import type { TargetState } from './backups.query.js';
import type { DashboardServices } from './deps.js';
import { age, badge, count } from './format.js';
import { action, columns, csrfField } from './layout.js';

/**
 * The Backups page's offsite targets card: each target with its state (reachable, with what it
 * holds, or unreachable and why), its prune button, and the newest snapshots it holds with verify
 * (all, or a sample) and restore into a site.
 */

type Snapshot = Awaited<ReturnType<DashboardServices['backups']['targets']['snapshots']>>['snapshots'][number];

const SNAPSHOTS_LISTED = 50;
/** The sample a "Verify 10 %" button asks for; the verify route accepts only it. */
export const SAMPLE_PERCENT = 10;

const bytes = (n: number) =>
  n >= 1e9 ? `${(n / 1e9).toFixed(1)} GB` : n >= 1e6 ? `${(n / 1e6).toFixed(1)} MB` : `${Math.round(n / 1e3)} kB`;

function snapshotsTable(session: SignedInSession, target: string, snapshots: Snapshot[], now: number) {
  const newest = [...snapshots].reverse().slice(0, SNAPSHOTS_LISTED);
  const base = `/backups/targets/${target}/snapshots`;
  return html`<div class="table-wrap">
    <table>
      <caption>
        ${snapshots.length > SNAPSHOTS_LISTED ? `The newest ${SNAPSHOTS_LISTED} of ${snapshots.length}` : ''}
      </caption>
      ${columns('Site', 'Backup', 'Finished', 'Size', 'Actions')}
      <tbody>
        ${newest.map(
          (s) =>
            html`<tr>
              <th scope="row"><a href="/sites/${s.siteId}">${s.siteUrl}</a></th>
              <td>${s.kind}<span class="url">${s.backupId}</span></td>
              <td>${age(new Date(s.finishedAt), now)}</td>
              <td>${bytes(s.bytesTotal)} <span class="url">${s.files} files, ${s.tables} tables</span></td>
              <td class="actions">
                ${action(session, `${base}/${s.backupId}/verify?sample=${SAMPLE_PERCENT}`, `Verify ${SAMPLE_PERCENT} %`)}
                ${action(session, `${base}/${s.backupId}/verify`, 'Verify all')}
                <form method="post" action="${base}/${s.backupId}/restore">
                  ${csrfField(session)}
                  <label for="restore-${s.backupId}">Into site</label
                  ><input id="restore-${s.backupId}" name="siteId" value="${s.siteId}" size="14" required />
                  <label class="check"
                    ><input type="checkbox" name="confirm" value="yes" required /> Overwrite it</label
                  >
                  <button type="submit" class="danger">Restore</button>
                </form>
              </td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

export function targetsSection(session: SignedInSession, targets: { name: string; state: TargetState }[], now: number) {
  return html`<section class="card" aria-labelledby="targets-h">
    <h2 id="targets-h">Offsite targets</h2>
    ${
      targets.length === 0
        ? html`<p class="muted">
            No offsite target: backups stay on this machine only. Name S3-compatible targets in
            <code>SITEWARDEN_TARGETS</code> (see docs/offsite.md) and restart the daemon.
          </p>`
        : targets.map(
            ({ name, state }) =>
              html`<section id="target-${name}" aria-labelledby="target-${name}-h">
                <h3 id="target-${name}-h">${name}</h3>
                <p>
                  ${
                    state.ok
                      ? html`${badge('up', 'reachable')} ${count(state.snapshots.length, 'backup')},
                        ${bytes(state.snapshots.reduce((sum, s) => sum + s.bytesTotal, 0))} before dedup; newest
                        ${age(state.snapshots.at(-1) ? new Date(state.snapshots.at(-1)!.finishedAt) : null, now)}
                        ${state.unreadable.length > 0 ? html`<strong>${count(state.unreadable.length, 'unreadable record')}</strong>` : ''}`
                      : html`${badge('down', 'unreachable')} ${state.error}`
                  }
                </p>
                <div class="actions">
                  ${action(session, `/backups/targets/${name}/prune`, `Prune ${name}`, {
                    danger: true,
                    confirm: 'Delete what no remaining backup needs',
                  })}
                </div>
                ${state.ok && state.snapshots.length > 0 ? snapshotsTable(session, name, state.snapshots, now) : ''}
              </section>`,
          )
    }
  </section>`;
}
