import { html } from 'hono/html';
import type { SignedInSession } from '../users/index.js';
import type { DashboardServices } from './deps.js';
import { age, badge, count } from './format.js';
import { action, columns } from './layout.js';

/**
 * The Backups page's verify and repair card (`#checks`): the recent verify and repair jobs, each
 * with how far it got while it runs and, once done, what it found: verified, or damaged with the
 * site files and tables it can no longer restore and a Repair button.
 */

type CheckJob = Awaited<ReturnType<DashboardServices['backups']['recentChecks']>>[number];

/** Lost file paths shown per job (its result in the API lists 50). */
const PATHS_SHOWN = 10;

const parsed = (json: string): Record<string, unknown> => {
  try {
    const value: unknown = JSON.parse(json);
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
};
const num = (value: unknown) => (typeof value === 'number' ? value : 0);
const strings = (value: unknown) =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

/** What a check job says: how far it got while it runs; what is lost, in files and tables, when it found damage. */
function checkOutcome(session: SignedInSession, job: CheckJob) {
  const progress = parsed(job.progress);
  const params = parsed(job.params);
  if (job.state === 'queued') return html`waiting`;
  if (job.state === 'running') {
    const done = num(progress.filesChecked) + num(progress.tablesChecked);
    const total = num(progress.files) + num(progress.tables);
    return html`<span class="progress"
      >${num(progress.filesChecked)}/${num(progress.files)} files,
      ${num(progress.tablesChecked)}/${num(progress.tables)}
      tables${total > 0 ? ` (${Math.floor((done / total) * 100)} %)` : ''},
      ${count(num(progress.objectsChecked), 'object')} read back</span
    >`;
  }
  if (job.state !== 'succeeded') return html`${job.message ?? job.reason ?? ''}`;
  const result = parsed(JSON.stringify(progress.result ?? {}));
  const lost = parsed(JSON.stringify(result.lost ?? {}));
  const sample = num(result.sample);
  const repaired =
    job.kind === 'backup-repair'
      ? `${count(num(progress.objectsResent), 'object')} sent again${strings(progress.unrepairable).length > 0 ? `, ${strings(progress.unrepairable).length} with no good copy anywhere` : ''}; `
      : '';
  if (result.ok === true)
    return html`${repaired}verified: ${num(result.objectsChecked)} objects read back and
    matched${sample > 0 && sample < 100 ? ` (a ${sample} % sample)` : ''}.`;
  const paths = strings(lost.filePaths);
  const tables = strings(lost.tableNames);
  const keys = [
    ...strings(result.missing).map((h) => `missing ${h}`),
    ...strings(result.corrupt).map((h) => `corrupt ${h}`),
  ];
  const target = typeof params.target === 'string' ? params.target : 'local';
  const backupId = typeof params.backupId === 'string' ? params.backupId : '';
  return html`<strong
      >${repaired}damaged:
      ${
        lost.everything === true
          ? 'the backup’s list of files cannot be read: nothing of it can be restored from here'
          : `${count(num(lost.files), 'file')} and ${count(num(lost.tables), 'table')} cannot be restored from here`
      }</strong
    >
    ${paths.length > 0 ? html`<span class="url">Files: ${paths.slice(0, PATHS_SHOWN).join(', ')}${num(lost.files) > PATHS_SHOWN ? ` and ${num(lost.files) - PATHS_SHOWN} more` : ''}</span>` : ''}
    ${tables.length > 0 ? html`<span class="url">Tables: ${tables.join(', ')}${num(lost.tables) > tables.length ? ` and ${num(lost.tables) - tables.length} more` : ''}</span>` : ''}
    <details>
      <summary>Objects (${keys.length})</summary>
      <span class="url">${keys.slice(0, 50).join(', ')}</span>
    </details>
    ${
      backupId !== '' && job.siteId
        ? action(session, `/backups/checks/${job.siteId}/${backupId}/repair?target=${target}`, 'Repair')
        : ''
    }`;
}

export function checksSection(session: SignedInSession, checks: CheckJob[], now: number) {
  return html`<section class="card" id="checks" aria-labelledby="checks-h">
    <h2 id="checks-h">Verify and repair</h2>
    <p class="muted">
      Verifies read a backup back from a target and check every object; a damaged one names the site files and tables it
      can no longer restore. <em>Repair</em> sends what is missing or corrupt again from a good copy (this machine’s
      store or another target); the next backup’s copy also sends again what a verify found corrupt.
    </p>
    ${
      checks.length === 0
        ? html`<p class="muted">No verify yet.</p>`
        : html`<div class="table-wrap">
            <table>
              ${columns('Started', 'Backup', 'Target', 'State', 'Outcome')}
              <tbody>
                ${checks.map((job) => {
                  const params = parsed(job.params);
                  return html`<tr data-job-id="${job.id}">
                    <td>${age(job.createdAt, now)}<span class="url">${job.id}</span></td>
                    <td>
                      ${job.kind === 'backup-repair' ? 'repair' : 'verify'}
                      <span class="url">${String(params.backupId ?? '')}</span>
                      ${job.siteId ? html`<a href="/sites/${job.siteId}">site</a>` : ''}
                    </td>
                    <td>${String(params.target ?? 'local')}</td>
                    <td>${badge(job.state)}</td>
                    <td>${checkOutcome(session, job)}</td>
                  </tr>`;
                })}
              </tbody>
            </table>
          </div>`
    }
  </section>`;
}
