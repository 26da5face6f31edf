import { html } from 'hono/html';
import type { DashboardServices } from './deps.js';
import { badge } from './format.js';
import { columns, csrfField } from './layout.js';

/**
 * A bulk update's per-site table (on its run page, swapped in by live.js as the jobs move): each
 * site's state in a person's words (a kept update whose page looks different is a warning, a
 * rolled-back one says so), its items with their versions and outcomes, and a cancel button for a
 * site not started yet. A fleet-wide run shows its first sites only, those that need a look first.
 */

type Run = Awaited<ReturnType<DashboardServices['bulkUpdates']['run']>>;
type RunSite = Run['sites'][number];

const SITES_SHOWN = 200;

/** A rolled-back item failed with one of these reasons (see docs/safe-updates.md). */
const ROLLED_BACK = new Set(['update-rolled-back']);
/** A safe item kept with a page that looks different (a warning), and one not updated because the site was already down. */
const VISUAL_CHANGE = 'visual-change';
const SITE_DOWN_BEFORE_UPDATE = 'site-down-before-update';
type RunItem = RunSite['items'][number];
const looksDifferent = (item: RunItem) => item.state === 'succeeded' && item.reason === VISUAL_CHANGE;

/** What a person reads for a site's state: queued, updating, updated, failed, rolled back, skipped, cancelled. */
function siteWord(site: RunSite): { word: string; badgeClass: string } {
  if (site.state === 'running') return { word: 'updating', badgeClass: 'running' };
  // A warning, not the green tick: kept, but a page looks different beyond the threshold.
  if (site.state === 'succeeded' && site.items.some(looksDifferent))
    return { word: 'updated, looks different', badgeClass: 'degraded' };
  if (site.state === 'succeeded') return { word: 'updated', badgeClass: 'succeeded' };
  if (site.state === 'skipped' && site.items.some((item) => item.reason === SITE_DOWN_BEFORE_UPDATE))
    return { word: 'site was already down', badgeClass: 'skipped' };
  if (site.state === 'failed' && site.items.some((item) => item.reason && ROLLED_BACK.has(item.reason)))
    return { word: 'rolled back', badgeClass: 'partial' };
  return { word: site.state, badgeClass: site.state };
}

/** An item's outcome: kept with a visual change is a warning; not updated because the site was already down says so. */
function itemBadge(item: RunItem) {
  if (looksDifferent(item)) return badge('degraded', 'updated, looks different');
  if (item.reason === SITE_DOWN_BEFORE_UPDATE) return badge('skipped', 'skipped: site was already down');
  return badge(item.state);
}

const itemLabel = (item: { type: string; slug: string | null }) =>
  item.slug ? `${item.slug} (${item.type})` : item.type;

/** Sites that need a look first: running, then failed, then waiting; the rest after. */
const ORDER: Record<string, number> = { running: 0, failed: 1, queued: 2 };

export function sitesTable(run: Run, session: Parameters<typeof csrfField>[0]) {
  // A fleet-wide run can have thousands of sites, and live.js fetches the page at each change: the first rows only.
  const sites = [...run.sites].sort((a, b) => (ORDER[a.state] ?? 3) - (ORDER[b.state] ?? 3)).slice(0, SITES_SHOWN);
  return html`<div class="table-wrap">
    <table>
      ${
        run.sites.length > SITES_SHOWN
          ? html`<caption>
              The ${SITES_SHOWN} sites running, failed or waiting first, of ${run.sites.length}
            </caption>`
          : ''
      }
      ${columns('Site', 'State', 'Items')}
      <tbody>
        ${sites.map((site) => {
          const { word, badgeClass } = siteWord(site);
          return html`<tr data-site-state="${word}">
            <th scope="row"><a href="/sites/${site.siteId}">${site.url}</a></th>
            <td>
              ${run.dryRun ? html`<span class="badge none">would update</span>` : badge(badgeClass, word)}
              ${site.message ? html`<span class="url">${site.message}</span>` : ''}
              ${
                !run.dryRun && site.state === 'queued' && site.jobId
                  ? html`<form method="post" action="/updates/runs/${run.job.id}/sites/${site.jobId}/cancel">
                      ${csrfField(session)}<button type="submit" class="secondary">Cancel this site</button>
                    </form>`
                  : ''
              }
            </td>
            <td>
              <ul class="items">
                ${site.items.map(
                  (item) =>
                    html`<li>
                      ${itemLabel(item)} ${item.fromVersion ?? '?'} → <strong>${item.toVersion ?? '?'}</strong>
                      ${run.dryRun ? '' : itemBadge(item)}
                      ${item.reason ? html`<span class="muted">${item.reason}${item.message ? `: ${item.message}` : ''}</span>` : ''}
                      ${item.safeUpdateId ? html`<a href="/sites/${site.siteId}/safe-updates/${item.safeUpdateId}">safe-update report</a>` : ''}
                    </li>`,
                )}
              </ul>
            </td>
          </tr>`;
        })}
      </tbody>
    </table>
  </div>`;
}
