import { Hono, type Context } from 'hono';
import { html } from 'hono/html';
import { TagRetentionInput } from '../backups/index.js';
import { commonProblems, isAppError } from '../shared/errors.js';
import { TagName } from '../sites/index.js';
import type { SignedInSession } from '../users/index.js';
import type { DashboardServices } from './deps.js';
import { age, badge, count } from './format.js';
import { action, columns, csrfField, page } from './layout.js';
import { flashOutcome, takeFlash, type DashboardEnv } from './session.js';

type Backups = DashboardServices['backups'];
type Snapshot = Awaited<ReturnType<Backups['targets']['snapshots']>>['snapshots'][number];
type CheckJob = ReturnType<Backups['recentChecks']>[number];

/** Verify and repair jobs listed, newest first. */
const CHECKS_LISTED = 20;
/** Lost file paths shown per job (its result in the API lists 50). */
const PATHS_SHOWN = 10;

const SNAPSHOTS_LISTED = 50;
/** A target that does not answer in this time is shown unreachable; the page does not wait on it. */
const TARGET_READ_MS = 15_000;
const SAMPLE_PERCENT = 10;
const RETENTION_FIELDS = [
  ['keepLast', 'Keep the last'],
  ['keepDays', 'Keep all younger than (days)'],
  ['keepDaily', 'Daily'],
  ['keepWeekly', 'Weekly'],
  ['keepMonthly', 'Monthly'],
  ['keepYearly', 'Yearly'],
] as const;

const bytes = (n: number) =>
  n >= 1e9 ? `${(n / 1e9).toFixed(1)} GB` : n >= 1e6 ? `${(n / 1e6).toFixed(1)} MB` : `${Math.round(n / 1e3)} kB`;

async function readTarget(backups: Backups, name: string) {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${TARGET_READ_MS / 1000} s`)), TARGET_READ_MS);
  });
  try {
    return { ok: true as const, ...(await Promise.race([backups.targets.snapshots(name), timeout])) };
  } catch (error) {
    return { ok: false as const, error: isAppError(error) ? error.detail : (error as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

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

function checksSection(session: SignedInSession, checks: CheckJob[], now: number) {
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

function retentionSection(session: SignedInSession, backups: Backups) {
  const { defaults, tags } = backups.retention.view();
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

/**
 * Backups across the fleet: each offsite target with its state and the snapshots it holds
 * (read from the target itself), verify and prune (prune asks for a ticked box), and backup
 * retention per tag.
 */
export function createBackupsPage(deps: DashboardServices) {
  const app = new Hono<DashboardEnv>();
  async function act(c: Context<DashboardEnv>, anchor: string, work: () => Promise<string> | string) {
    await flashOutcome(c, work);
    return c.redirect(`/backups${anchor}`, 303);
  }
  const targetOf = (c: Context) => {
    const name = c.req.param('name')!;
    if (!deps.backups.targets.names.includes(name)) throw commonProblems.notFound.create(`there is no target ${name}`);
    return name;
  };

  app.get('/backups', async (c) => {
    const session = c.get('session');
    const now = deps.clock.now().getTime();
    const targets = await Promise.all(
      deps.backups.targets.names.map(async (name) => ({ name, state: await readTarget(deps.backups, name) })),
    );
    const body = html`<h1>Backups</h1>
      <section class="card" aria-labelledby="targets-h">
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
      </section>
      ${checksSection(session, deps.backups.recentChecks(CHECKS_LISTED), now)}
      ${retentionSection(session, deps.backups)}`;
    return c.html(page({ title: 'Backups', session, current: '/backups', body, flash: takeFlash(c) }));
  });

  app.post('/backups/targets/:name/prune', (c) =>
    act(c, '', async () => {
      const form = await c.req.parseBody();
      const target = targetOf(c);
      if (form.confirm !== 'yes') return 'Nothing pruned: tick the box to confirm.';
      // A prune holds the store exclusively and may take long: a job, seen finishing on the Activity page.
      const job = deps.backups.targets.requestPrune(target);
      return `Prune of ${target} queued (job ${job.id}); the Activity page shows what it removed.`;
    }),
  );

  // A verify reads the whole backup back (minutes on a large one): a job, followed in the Verify and repair section.
  app.post('/backups/targets/:name/snapshots/:backupId/verify', (c) =>
    act(c, '#checks', () => {
      const target = targetOf(c);
      const sample = c.req.query('sample') === String(SAMPLE_PERCENT) ? SAMPLE_PERCENT : undefined;
      const job = deps.backups.requestVerify(c.req.param('backupId'), { target, sample }, c.get('actor'));
      return `Verify of ${c.req.param('backupId')} on ${target} queued (job ${job.id}): it shows below as it runs.`;
    }),
  );

  app.post('/backups/checks/:siteId/:backupId/repair', (c) =>
    act(c, '#checks', () => {
      const { siteId, backupId } = c.req.param();
      deps.backups.get(siteId, backupId);
      const target = c.req.query('target') ?? 'local';
      const job = deps.backups.requestRepair(backupId, { target }, c.get('actor'));
      return `Repair of ${backupId} on ${target} queued (job ${job.id}): it shows below as it runs.`;
    }),
  );

  // Disaster recovery: a backup the target holds, restored into a connected site (recorded here first if this daemon never had it).
  app.post('/backups/targets/:name/snapshots/:backupId/restore', (c) =>
    act(c, '', async () => {
      const form = await c.req.parseBody();
      const target = targetOf(c);
      if (form.confirm !== 'yes') return 'Nothing restored: tick the box to confirm.';
      const siteId = typeof form.siteId === 'string' ? form.siteId.trim().slice(0, 64) : '';
      if (siteId === '') throw commonProblems.validation.create('Nothing restored: name the site to restore into.');
      await deps.backups.targets.restore(target, c.req.param('backupId'), siteId);
      return `Restore from ${target} started: the site's page shows it as it runs.`;
    }),
  );

  app.post('/backups/retention', (c) =>
    act(c, '#retention', async () => {
      const form = await c.req.parseBody();
      const tag = TagName.safeParse(typeof form.tag === 'string' ? form.tag.trim().toLowerCase() : '');
      if (!tag.success) throw commonProblems.validation.create(`Nothing saved: tag: ${tag.error.issues[0]?.message}`);
      const values = Object.fromEntries(
        RETENTION_FIELDS.map(([field]) => {
          const value = typeof form[field] === 'string' ? form[field].trim() : '';
          return [field, value === '' ? null : Number(value)];
        }),
      );
      const input = TagRetentionInput.safeParse(values);
      if (!input.success) {
        const issue = input.error.issues[0]!;
        throw commonProblems.validation.create(`Nothing saved: ${String(issue.path[0])}: ${issue.message}`);
      }
      deps.backups.retention.setTag(tag.data, input.data);
      return `Retention of tag ${tag.data} saved.`;
    }),
  );

  app.post('/backups/retention/:tag/delete', (c) =>
    act(c, '#retention', async () => {
      const form = await c.req.parseBody();
      if (form.confirm !== 'yes') return 'Nothing removed: tick the box to confirm.';
      deps.backups.retention.deleteTag(c.req.param('tag'));
      return `Retention of tag ${c.req.param('tag')} removed: its sites follow the defaults.`;
    }),
  );
  return app;
}
