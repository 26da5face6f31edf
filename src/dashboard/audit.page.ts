import { Hono, type Context } from 'hono';
import { html } from 'hono/html';
import { z } from 'zod';
import {
  auditFilter,
  auditOutcomes,
  auditRequests,
  type AuditLogRow,
  auditLines,
  type AuditLogService,
} from '../audit/index.js';
import type { DashboardServices } from './deps.js';
import { age, badge } from './format.js';
import { columns, page } from './layout.js';
import { FLASH_COOKIE, takeFlash, type DashboardEnv } from './session.js';

const PAGE_SIZE = 50;

/**
 * The dashboard's audit middleware (audit/audit.middleware.ts): every form post on a dashboard
 * path, after its answer. A form's work that failed answers the usual redirect with an error flash
 * (session.ts), recorded as `failed`; a form refused before a session was found (a stale CSRF token)
 * is recorded without an actor.
 */
export function auditDashboard(auditLog: Pick<AuditLogService, 'record'>) {
  const flashedError = `${FLASH_COOKIE}=error`;
  return auditRequests({
    auditLog,
    source: 'dashboard',
    anonymous: (c) => c.res.status === 403,
    failed: (c) => c.res.headers.getSetCookie().some((cookie) => cookie.startsWith(flashedError)),
  });
}

/** Bad values fall back to no filter: a hand-edited URL still shows the log. */
const AuditQuery = z.object({
  site: z.string().trim().max(64).optional().catch(undefined),
  actor: z.string().trim().max(64).optional().catch(undefined),
  since: z.iso.date().optional().catch(undefined),
  until: z.iso.date().optional().catch(undefined),
  outcome: z.enum(auditOutcomes).optional().catch(undefined),
  before: z
    .string()
    .trim()
    .regex(/^aud_[0-9a-z]{26}$/)
    .optional()
    .catch(undefined),
});
type AuditQuery = z.infer<typeof AuditQuery>;

const day = (date: string | undefined, plus = 0) =>
  date ? new Date(Date.parse(`${date}T00:00:00Z`) + plus * 86_400_000).toISOString() : undefined;

const filterOf = (query: AuditQuery) =>
  auditFilter({
    site: query.site || undefined,
    actor: query.actor || undefined,
    since: day(query.since),
    until: day(query.until, 1),
    outcome: query.outcome,
  });

const OUTCOME_BADGE: Record<AuditLogRow['outcome'], string> = {
  ok: 'succeeded',
  refused: 'degraded',
  failed: 'failed',
};

const who = (row: AuditLogRow) =>
  row.actorKind === null
    ? html`<span class="muted">nobody signed in</span
        >${row.actorName ? html` (tried <code>${row.actorName}</code>)` : ''}`
    : html`${row.actorKind} <strong>${row.actorName ?? row.actorId}</strong>`;

/** The audit log (owners: http/permissions.ts): every state-changing request and sign-in, filtered, newest first. */
export function createAuditPage(
  deps: Pick<DashboardServices, 'users' | 'sites' | 'clock'> & { auditLog: AuditLogService },
) {
  const app = new Hono<DashboardEnv>();
  app.get('/settings/audit/export', (c: Context<DashboardEnv>) => {
    const query = AuditQuery.parse(c.req.query());
    c.header('content-type', 'application/x-ndjson');
    c.header('content-disposition', 'attachment; filename="sitewarden-audit.jsonl"');
    return c.body(auditLines(deps.auditLog, filterOf(query)), 200);
  });
  app.get('/settings/audit', async (c) => {
    const query = AuditQuery.parse(c.req.query());
    const rows = await deps.auditLog.list({ ...filterOf(query), before: query.before, limit: PAGE_SIZE + 1 });
    const more = rows.length > PAGE_SIZE;
    const shown = rows.slice(0, PAGE_SIZE);
    const users = await deps.users.list();
    const now = deps.clock.now().getTime();
    const siteNames = new Map(
      (
        await Promise.all(
          [...new Set(shown.flatMap((row) => (row.siteId ? [row.siteId] : [])))].map(async (id) => {
            const site = await deps.sites.find(id);
            return site ? [[id, site.name ?? site.url] as const] : [];
          }),
        )
      ).flat(),
    );
    const filters = Object.entries({ ...query, before: undefined }).filter((e): e is [string, string] => Boolean(e[1]));
    const next = new URLSearchParams([...filters, ['before', shown.at(-1)?.id ?? '']]);
    const body = html`<h1>Audit log</h1>
      <p>
        <a href="/settings">Settings</a> · every change asked of the daemon, refusals included, and every sign-in: who,
        from where, what, on which site and what came of it. Never a password, a token or a form’s content.
      </p>
      <form class="filters" method="get" action="/settings/audit" role="search">
        <div><label for="a-site">Site (id)</label><input id="a-site" name="site" value="${query.site ?? ''}" /></div>
        <div>
          <label for="a-actor">User or token (id)</label>
          <input id="a-actor" name="actor" list="a-users" value="${query.actor ?? ''}" />
          <datalist id="a-users">${users.map((u) => html`<option value="${u.id}">${u.username}</option>`)}</datalist>
        </div>
        <div>
          <label for="a-outcome">Outcome</label>
          <select id="a-outcome" name="outcome">
            <option value="">any</option>
            ${auditOutcomes.map((o) => html`<option value="${o}" ${query.outcome === o ? 'selected' : ''}>${o}</option>`)}
          </select>
        </div>
        <div>
          <label for="a-since">From</label><input id="a-since" name="since" type="date" value="${query.since ?? ''}" />
        </div>
        <div>
          <label for="a-until">To</label><input id="a-until" name="until" type="date" value="${query.until ?? ''}" />
        </div>
        <button type="submit">Filter</button>
        <a href="/settings/audit">Clear</a>
        <a href="/settings/audit/export?${new URLSearchParams(filters).toString()}">Export (JSON lines)</a>
      </form>
      ${
        shown.length === 0
          ? html`<p class="muted">No entry matches these filters.</p>`
          : html`<div class="table-wrap">
              <table>
                ${columns('When', 'Who', 'From', 'What', 'Site', 'Target', 'Result')}
                <tbody>
                  ${shown.map(
                    (row) =>
                      html`<tr>
                        <td><time datetime="${row.at.toISOString()}">${age(row.at, now)}</time></td>
                        <td>${who(row)}</td>
                        <td><code>${row.address}</code></td>
                        <td>
                          <code>${row.method ?? ''} ${row.action}</code> <span class="muted">(${row.source})</span>
                        </td>
                        <td>
                          ${row.siteId ? html`<a href="/sites/${encodeURIComponent(row.siteId)}">${siteNames.get(row.siteId) ?? row.siteId}</a>` : ''}
                        </td>
                        <td>${row.targetKind ? html`${row.targetKind} <code>${row.targetId}</code>` : ''}</td>
                        <td>
                          ${badge(OUTCOME_BADGE[row.outcome], `${row.outcome} ${row.status}`)}
                          ${row.problem ? html`<code>${row.problem}</code>` : ''}
                        </td>
                      </tr>`,
                  )}
                </tbody>
              </table>
            </div>`
      }
      ${more ? html`<nav class="pager" aria-label="Pages"><a rel="next" href="/settings/audit?${next.toString()}">Older →</a></nav>` : ''}`;
    return c.html(
      page({ title: 'Audit log', session: c.get('session'), current: '/settings/audit', body, flash: takeFlash(c) }),
    );
  });
  return app;
}
