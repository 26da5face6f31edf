import { Hono } from 'hono';
import { html } from 'hono/html';
import { z } from 'zod';
import type { DashboardServices } from './deps.js';
import { age, badge } from './format.js';
import { columns, page } from './layout.js';
import { takeFlash, type DashboardEnv } from './session.js';

const LISTED = 20;
/** The update-history reason of an update applied while the site failed after it (inventory updateProblems). */
const APPLIED_UNHEALTHY = 'update-applied-site-unhealthy';
/** How soon after an update a site going down is put down to it (the site page offers to roll it back). */
const DOWN_AFTER_UPDATE_MS = 60 * 60_000;
const PAGE_SIZE = 50;
const RESULTS = ['succeeded', 'failed', 'skipped', 'running'] as const;
const TYPES = ['plugin', 'theme', 'core', 'translations'] as const;

type HistoryRow = Awaited<ReturnType<DashboardServices['bulkUpdates']['history']>>[number];
type Names = (trigger: { kind: string; id: string | null }) => string;

/** Who asked, by name: the dashboard user, the policy, or an API token. */
export async function triggerNames(deps: Pick<DashboardServices, 'users' | 'updatePolicies'>): Promise<Names> {
  const users = new Map((await deps.users.list()).map((user) => [user.id, user.username]));
  const policies = new Map((await deps.updatePolicies.list()).map((policy) => [policy.id, policy.name]));
  return ({ kind, id }) => {
    if (kind === 'policy') return `policy ${(id && policies.get(id)) ?? id ?? ''}`.trim();
    if (kind === 'user') return (id && users.get(id)) ?? 'a removed user';
    return 'API token';
  };
}

/** Who started the attempt, linked to its bulk run when it was one. */
function triggerCell(row: HistoryRow, names: Names) {
  const label = names({ kind: row.triggerKind, id: row.triggerId });
  return row.jobId?.startsWith('bulk_') ? html`<a href="/updates/runs/${row.jobId}">${label}</a>` : label;
}

/**
 * The plain updates on the list whose restore point can be put back (`Roll back`, confirmed on its
 * own page, rollback.routes.ts): finished, and no rollback of them listed (one is newer than them).
 */
function rollbackable(rows: HistoryRow[]): Set<string> {
  const rolledBack = new Set(
    rows.filter((row) => row.rollbackOf && row.result !== 'failed').map((row) => row.rollbackOf),
  );
  return new Set(
    rows.filter((row) => row.restorePoint && row.result !== 'running' && !rolledBack.has(row.id)).map((row) => row.id),
  );
}

function historyRows(
  rows: HistoryRow[],
  names: Names,
  now: number,
  site?: (row: HistoryRow) => unknown,
  canRollBack = new Set<string>(),
) {
  return rows.map(
    (row) =>
      html`<tr>
        ${site ? html`<td>${site(row)}</td>` : ''}
        <th scope="row">${row.slug ? `${row.slug} (${row.type})` : row.type}</th>
        <td>${row.fromVersion ?? '?'} → ${row.toVersion ?? '?'}</td>
        <td>
          ${
            row.reason === APPLIED_UNHEALTHY
              ? html`${badge('succeeded', 'applied')} ${badge('down', 'site unhealthy')}`
              : row.result === 'succeeded' && row.reason === 'visual-change'
                ? badge('degraded', 'succeeded, looks different')
                : badge(row.result)
          }
          ${row.reason ? html`<span class="url">${row.reason}${row.error ? `: ${row.error}` : ''}</span>` : ''}
          ${row.safeUpdateId ? html`<a href="/sites/${row.siteId}/safe-updates/${row.safeUpdateId}">report</a>` : ''}
          ${row.rollbackOf ? html`<span class="url">rollback of ${row.rollbackOf}</span>` : ''}
          ${
            canRollBack.has(row.id)
              ? html`<a class="button secondary" href="/sites/${row.siteId}/updates/history/${row.id}/rollback"
                  >Roll back</a
                >`
              : ''
          }
        </td>
        <td>${triggerCell(row, names)}</td>
        <td>${age(row.startedAt, now)}</td>
      </tr>`,
  );
}

/**
 * At the top of a site's page, when its last update broke it: the update was applied and the site
 * failed after it (its history entry says so), or the site went down within the hour after it
 * (uptime) and is still down. Offered only for an update that can be rolled back (a plain one
 * with its restore point, not rolled back yet); the button leads to the confirmation page.
 */
export async function brokenByUpdateNotice(
  deps: Pick<DashboardServices, 'bulkUpdates'>,
  siteId: string,
  uptime: { status: string; since: string | null },
) {
  const rows = await deps.bulkUpdates.history({ siteId, limit: LISTED });
  const last = rows.find((row) => !row.rollbackOf && row.result !== 'skipped');
  if (!last || !rollbackable(rows).has(last.id)) return '';
  const downSince = uptime.status === 'down' && uptime.since ? Date.parse(uptime.since) : NaN;
  const finished = (last.finishedAt ?? last.startedAt).getTime();
  const downAfter = downSince >= last.startedAt.getTime() && downSince - finished <= DOWN_AFTER_UPDATE_MS;
  if (last.reason !== APPLIED_UNHEALTHY && !downAfter) return '';
  const item = last.slug ?? last.type;
  const why =
    last.reason === APPLIED_UNHEALTHY
      ? 'the site failed right after it'
      : `the site has been down since ${new Date(downSince).toISOString().replace('T', ' ').slice(0, 16)} UTC`;
  return html`<section class="notice" id="broken-by-update" role="alert">
    <p>
      <strong>The update of ${item} from ${last.fromVersion ?? '?'} to ${last.toVersion ?? '?'} broke the site:</strong>
      ${why}.
    </p>
    <p>
      <a class="button danger" href="/sites/${siteId}/updates/history/${last.id}/rollback"
        >Roll back ${item} to ${last.fromVersion ?? 'its previous version'}</a
      >
    </p>
  </section>`;
}

/** A site's update history on its page: each attempt, newest first, who asked and how it ended. */
export async function updateHistorySection(
  deps: Pick<DashboardServices, 'bulkUpdates' | 'users' | 'updatePolicies'>,
  siteId: string,
  now: number,
) {
  const attempts = await deps.bulkUpdates.history({ siteId, limit: LISTED });
  const names = attempts.length === 0 ? undefined : await triggerNames(deps);
  return html`<section class="card" id="update-history" aria-labelledby="update-history-h">
    <h2 id="update-history-h">Update history</h2>
    ${
      attempts.length === 0
        ? html`<p class="muted">No update yet: updates from this page, bulk updates and policies are listed here.</p>`
        : html`<div class="table-wrap">
              <table>
                ${columns('Item', 'Version', 'Result', 'Asked by', 'When')}
                <tbody>
                  ${historyRows(attempts, names!, now, undefined, rollbackable(attempts))}
                </tbody>
              </table>
            </div>
            <p><a href="/updates/history?site=${encodeURIComponent(siteId)}">All of this site’s updates</a></p>`
    }
  </section>`;
}

/** Bad values fall back to no filter: a hand-edited URL still shows the history. */
const HistoryQuery = z.object({
  site: z.string().trim().max(64).optional().catch(undefined),
  tag: z.string().trim().toLowerCase().max(100).optional().catch(undefined),
  item: z.string().trim().max(200).optional().catch(undefined),
  type: z.enum(TYPES).optional().catch(undefined),
  result: z.enum(RESULTS).optional().catch(undefined),
  user: z.string().trim().max(64).optional().catch(undefined),
  since: z.iso.date().optional().catch(undefined),
  until: z.iso.date().optional().catch(undefined),
  before: z.string().trim().max(64).optional().catch(undefined),
});

const select = (name: string, label: string, value: string | undefined, options: [string, string][]) =>
  html`<div>
    <label for="h-${name}">${label}</label>
    <select id="h-${name}" name="${name}">
      <option value="">any</option>
      ${options.map(([v, text]) => html`<option value="${v}" ${value === v ? 'selected' : ''}>${text}</option>`)}
    </select>
  </div>`;

/** Every update attempt across the fleet, newest first, filtered by site, tag, item, user, result and date. */
export function createUpdateHistoryPage(deps: DashboardServices) {
  const app = new Hono<DashboardEnv>();
  app.get('/updates/history', async (c) => {
    const query = HistoryQuery.parse(c.req.query());
    // Site scopes (issue 33): the attempts (and tags, and site names) of the sites the user may see.
    const scope = c.get('access').sites;
    const users = await deps.users.list();
    const names = await triggerNames(deps);
    const day = (date: string | undefined, plus = 0) =>
      date ? new Date(Date.parse(`${date}T00:00:00Z`) + plus * 86_400_000) : undefined;
    const visible = async (siteId: string) => {
      try {
        await deps.sites.checkVisible(siteId, scope);
        return true;
      } catch {
        return false;
      }
    };
    const rows = await deps.bulkUpdates.history({
      siteId: query.site || undefined,
      tags: query.tag ? [query.tag] : [],
      slug: query.item || undefined,
      type: query.type,
      result: query.result,
      ...(query.user ? { triggerKind: 'user' as const, triggerId: query.user } : {}),
      since: day(query.since),
      until: day(query.until, 1),
      before: query.before || undefined,
      limit: PAGE_SIZE + 1,
      scope,
    });
    const more = rows.length > PAGE_SIZE;
    const shown = rows.slice(0, PAGE_SIZE);
    const urls = new Map(
      (
        await Promise.all(
          [...new Set([...shown.map((row) => row.siteId), ...(query.site ? [query.site] : [])])].map(async (id) => {
            const site = await deps.sites.find(id); // an unknown id in a hand-edited URL (or one outside the scope): shown as the id
            return site && (await visible(id)) ? [[id, site.name ?? site.url] as const] : [];
          }),
        )
      ).flat(),
    );
    const tagCounts = await deps.sites.tagCounts(scope);
    const now = deps.clock.now().getTime();
    const next = new URLSearchParams(
      Object.entries({ ...query, before: shown.at(-1)?.id }).filter((e): e is [string, string] => Boolean(e[1])),
    );
    const body = html`<h1>Update history</h1>
      <p>
        <a href="/updates">Updates</a> · every update attempt, newest first: one site’s, a tag’s, an item’s, a user’s.
      </p>
      <form class="filters" method="get" action="/updates/history" role="search">
        ${query.site ? html`<input type="hidden" name="site" value="${query.site}" />` : ''}
        ${select(
          'tag',
          'Tag',
          query.tag,
          tagCounts.map((t) => [t.tag, t.tag]),
        )}
        <div><label for="h-item">Item (slug)</label><input id="h-item" name="item" value="${query.item ?? ''}" /></div>
        ${select(
          'type',
          'Kind',
          query.type,
          TYPES.map((t) => [t, t]),
        )}
        ${select(
          'result',
          'Result',
          query.result,
          RESULTS.map((r) => [r, r]),
        )}
        ${select(
          'user',
          'User',
          query.user,
          users.map((u) => [u.id, u.username]),
        )}
        <div>
          <label for="h-since">From</label><input id="h-since" name="since" type="date" value="${query.since ?? ''}" />
        </div>
        <div>
          <label for="h-until">To</label><input id="h-until" name="until" type="date" value="${query.until ?? ''}" />
        </div>
        <button type="submit">Filter</button>
        <a href="/updates/history">Clear</a>
      </form>
      ${query.site ? html`<p>One site: <a href="/sites/${query.site}">${urls.get(query.site) ?? query.site}</a></p>` : ''}
      ${
        shown.length === 0
          ? html`<p class="muted">No update attempt matches these filters.</p>`
          : html`<div class="table-wrap">
              <table>
                ${columns('Site', 'Item', 'Version', 'Result', 'Asked by', 'When')}
                <tbody>
                  ${historyRows(shown, names, now, (row) => html`<a href="/sites/${row.siteId}">${urls.get(row.siteId) ?? row.siteId}</a>`)}
                </tbody>
              </table>
            </div>`
      }
      ${more ? html`<nav class="pager" aria-label="Pages"><a rel="next" href="/updates/history?${next.toString()}">Older →</a></nav>` : ''}`;
    return c.html(
      page({ title: 'Update history', session: c.get('session'), current: '/updates', body, flash: takeFlash(c) }),
    );
  });
  return app;
}
