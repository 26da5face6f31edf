import { Hono } from 'hono';
import { html } from 'hono/html';
import type { SignedInSession } from '../users/index.js';
import type { DashboardServices } from './deps.js';
import { age, badge } from './format.js';
import { action, columns, page } from './layout.js';
import { takeFlash, type DashboardEnv } from './session.js';

type SafeUpdate = Awaited<ReturnType<DashboardServices['safeUpdates']['get']>>;
type HealthReport = SafeUpdate['before'][number];

const LISTED = 20;
const UNFINISHED = new Set(['queued', 'running']);

/** What was decided, in a sentence. */
const DECISIONS: Record<SafeUpdate['status'], string> = {
  queued: 'Waiting to start.',
  running: 'Running: this page follows it.',
  kept: 'Updated and healthy after the update: kept.',
  'rolled-back':
    'The site was not healthy after the update: the previous version was put back, and the site is healthy.',
  'rollback-failed': 'The site was still broken after the rollback: someone must look at it now.',
  failed: 'Not updated.',
};

/** The reason of a safe update the site's own state refused (docs/safe-updates.md): not the update's fault. */
const SITE_DOWN_BEFORE_UPDATE = 'site-down-before-update';

/**
 * A safe update's outcome as a badge: kept with a page that looks different is a warning (the stylesheet's
 * warning colour, ◆), never the green tick; refused because the site was already down says so.
 */
function outcomeBadge(update: Pick<SafeUpdate, 'status' | 'visualChange' | 'reason'>) {
  if (update.status === 'kept' && update.visualChange) return badge('degraded', 'kept, looks different');
  if (update.status === 'failed' && update.reason === SITE_DOWN_BEFORE_UPDATE)
    return badge('failed', 'not updated: site already down');
  return badge(update.status);
}

/** What was decided, in a sentence, with the warnings a status alone does not say. */
function decision(update: SafeUpdate): string {
  if (update.status === 'kept' && update.visualChange)
    return 'Updated and healthy after the update, and kept, but a page looks different beyond the threshold: look at the screenshots below.';
  if (update.status === 'failed' && update.reason === SITE_DOWN_BEFORE_UPDATE)
    return 'The site was already down before the update (its checks failed before anything was changed): nothing was updated. Not the update’s fault.';
  return DECISIONS[update.status];
}

const ms = (value: number) => (value >= 10_000 ? `${(value / 1000).toFixed(1)} s` : `${Math.round(value)} ms`);
const at = (iso: string | null) => (iso ? `${iso.replace('T', ' ').slice(0, 19)} UTC` : '—');
const ok = (value: boolean, yes = 'ok', no = 'failed') => badge(value ? 'succeeded' : 'failed', value ? yes : no);
export const what = (update: Pick<SafeUpdate, 'type' | 'slug'>) =>
  update.type === 'core' ? 'WordPress core' : `${update.slug} (${update.type})`;

/** The site page's list of safe updates, and the buttons for core (plugins and themes have theirs in their tables). */
export async function safeUpdatesSection(
  deps: Pick<DashboardServices, 'safeUpdates'>,
  session: SignedInSession,
  site: { id: string; wordpressVersion: string | null },
  now: number,
) {
  const updates = await deps.safeUpdates.list(site.id, LISTED);
  const base = `/sites/${site.id}`;
  return html`<section class="card" id="safe-updates" data-live-section aria-labelledby="safe-updates-h">
    <h2 id="safe-updates-h">Safe updates</h2>
    <div class="actions">
      <span>WordPress core ${site.wordpressVersion ?? '?'}</span>
      ${action(session, `${base}/core/safe-update`, 'Update WordPress core')}
      ${action(session, `${base}/core/update`, 'Update WordPress core without checks')}
    </div>
    ${
      updates.length === 0
        ? html`<p class="muted">
            No safe update yet. A safe update checks the site before and after, takes screenshots and a restore point,
            and rolls back on its own when the site breaks. Every “Update” button is a safe update; “without checks” is
            the plain one.
          </p>`
        : html`<div class="table-wrap">
            <table>
              ${columns('Item', 'Version', 'Outcome', 'Started')}
              <tbody>
                ${updates.map(
                  (update) =>
                    html`<tr>
                      <th scope="row"><a href="${base}/safe-updates/${update.id}">${what(update)}</a></th>
                      <td>${update.fromVersion ?? '?'} → ${update.toVersion ?? '?'}</td>
                      <td>
                        ${outcomeBadge(update)}${update.visualChange && update.status !== 'kept' ? ' (looks different)' : ''}
                        ${update.reason ? html`<span class="url">${update.reason}</span>` : ''}
                      </td>
                      <td>${age(new Date(update.createdAt), now)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
  </section>`;
}

function checksTable(title: string, reports: HealthReport[]) {
  if (reports.length === 0) return '';
  return html`<h3>${title}</h3>
    <div class="table-wrap">
      <table>
        ${columns('Attempt', 'Check', 'Result', 'Time')}
        <tbody>
          ${reports.flatMap((report) =>
            report.checks.map(
              (check, i) =>
                html`<tr>
                  ${
                    i === 0
                      ? html`<th scope="rowgroup" rowspan="${report.checks.length}">
                          ${report.attempt} ${ok(report.healthy, 'healthy', 'unhealthy')}
                          <span class="url">${at(report.at)}, ${ms(report.durationMs)}</span>
                        </th>`
                      : ''
                  }
                  <td>${check.name}${check.url ? html`<span class="url">${check.url}</span>` : ''}</td>
                  <td>
                    ${ok(check.ok)}${check.status ? ` HTTP ${check.status}` : ''}${check.problem ? `: ${check.problem}` : ''}
                  </td>
                  <td class="num">${ms(check.durationMs)}</td>
                </tr>`,
            ),
          )}
        </tbody>
      </table>
    </div>`;
}

function reportBody(update: SafeUpdate, base: string) {
  const shot = (name: string | null, label: string) =>
    name
      ? html`<figure>
          <a href="${base}/screenshots/${name}"><img src="${base}/screenshots/${name}" alt="${label}" /></a>
          <figcaption>${label}</figcaption>
        </figure>`
      : html`<p class="muted">${label}: none</p>`;
  const duration =
    update.startedAt && update.finishedAt ? ms(Date.parse(update.finishedAt) - Date.parse(update.startedAt)) : '—';
  return html`<section class="card" id="report" data-live-section aria-labelledby="decision-h">
    <h2 id="decision-h">Decision</h2>
    <p data-outcome="${update.status === 'kept' && update.visualChange ? 'warning' : update.status}">
      ${outcomeBadge(update)} ${decision(update)}
    </p>
    <dl class="facts">
      <dt>Version</dt>
      <dd>${update.fromVersion ?? '?'} → ${update.toVersion ?? '?'}</dd>
      <dt>Phase</dt>
      <dd>${update.phase}</dd>
      ${
        update.reason
          ? html`<dt>Reason</dt>
              <dd>${update.reason}</dd>`
          : ''
      }
      ${
        update.message
          ? html`<dt>Message</dt>
              <dd>${update.message}</dd>`
          : ''
      }
      <dt>Visual change</dt>
      <dd>
        ${update.visualChange ? 'yes, beyond the threshold' : 'no'} (threshold ${update.policy.visual.threshold * 100}
        %)
      </dd>
      <dt>Started</dt>
      <dd>${at(update.startedAt)}</dd>
      <dt>Took</dt>
      <dd>${duration}</dd>
    </dl>
    <h3>Steps</h3>
    ${
      update.steps.length === 0
        ? html`<p class="muted">No step yet.</p>`
        : html`<ol class="steps">
            ${update.steps.map(
              (step) =>
                html`<li>
                  ${ok(step.ok)} <strong>${step.step}</strong> ${ms(step.durationMs)}
                  ${step.detail ? html`<span class="muted">${step.detail}</span>` : ''}
                </li>`,
            )}
          </ol>`
    }
    ${checksTable('Checks before', update.before)} ${checksTable('Checks after', update.after)}
    ${checksTable('Checks after the rollback', update.afterRollback)}
    <h3>Screenshots</h3>
    ${
      update.screenshots.length === 0
        ? html`<p class="muted">No screenshots${update.policy.visual.enabled ? ' yet' : ' (off in the policy)'}.</p>`
        : update.screenshots.map(
            (page) =>
              html`<h4>
                  ${page.url}${page.changedRatio === null ? '' : ` · ${(page.changedRatio * 100).toFixed(2)} % of pixels changed`}
                </h4>
                <div class="shots">
                  ${shot(page.before, `Before: ${page.url}`)}
                  ${shot(
                    page.after,
                    update.status === 'rolled-back' || update.status === 'rollback-failed'
                      ? `After the update, before the rollback: ${page.url}`
                      : `After: ${page.url}`,
                  )}
                  ${shot(page.diff, `Difference (changed pixels in red): ${page.url}`)}
                </div>`,
          )
    }
  </section>`;
}

/**
 * A safe update's report page, and its screenshots served behind the session (never a public
 * path). The buttons' actions are in site-actions.routes.ts.
 */
export function createSafeUpdatesPages(deps: DashboardServices) {
  const app = new Hono<DashboardEnv>();
  app.get('/sites/:id/safe-updates/:safeUpdateId', async (c) => {
    const session = c.get('session');
    const { id, safeUpdateId } = c.req.param();
    const update = await deps.safeUpdates.get(id, safeUpdateId);
    const base = `/sites/${encodeURIComponent(id)}/safe-updates/${encodeURIComponent(safeUpdateId)}`;
    const live = UNFINISHED.has(update.status);
    const body = html`<p><a href="/sites/${id}#safe-updates">← Site</a></p>
      <h1 data-site-id="${id}">Safe update of ${what(update)}</h1>
      ${reportBody(update, base)}`;
    return c.html(
      page({
        title: `Safe update of ${what(update)}`,
        session,
        current: '/',
        body,
        flash: takeFlash(c),
        scripts: live ? ['/assets/live.js'] : [],
      }),
    );
  });

  app.get('/sites/:id/safe-updates/:safeUpdateId/screenshots/:name', async (c) => {
    const { id, safeUpdateId, name } = c.req.param();
    const png = await deps.safeUpdates.screenshot(id, safeUpdateId, name);
    return c.body(new Uint8Array(png), 200, {
      'content-type': 'image/png',
      'cache-control': 'private, max-age=86400, immutable',
    });
  });
  return app;
}
