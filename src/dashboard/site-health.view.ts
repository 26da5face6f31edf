import { html } from 'hono/html';
import type { SignedInSession } from '../users/index.js';
import { scoreLine, uptimeBars } from './charts.js';
import type { DashboardServices } from './deps.js';
import { age, badge, percent, score } from './format.js';
import { action } from './layout.js';

/** The site page's uptime and performance cards: the last days' availability, downtime, and Lighthouse scores. */

type UptimeReport = Awaited<ReturnType<DashboardServices['uptime']['report']>>;
type Downtime = Awaited<ReturnType<DashboardServices['uptime']['downtime']>>[number];
type Audit = Awaited<ReturnType<DashboardServices['performance']['history']>>[number];

const share = (uptimePercent: number | null) => percent(uptimePercent === null ? null : uptimePercent / 100);

export function uptimeCard(uptime: UptimeReport, downtime: Downtime[]) {
  return html`<section class="card" aria-labelledby="uptime-h">
    <h2 id="uptime-h">Uptime</h2>
    <p>
      24 h
      <strong>${share(uptime.uptimePercent.last24h)}</strong>
      · 7 d
      <strong>${share(uptime.uptimePercent.last7d)}</strong>
      · 30 d
      <strong>${share(uptime.uptimePercent.last30d)}</strong>
      · last response ${uptime.lastResponseTimeMs === null ? '—' : `${uptime.lastResponseTimeMs} ms`}
    </p>
    ${uptimeBars(uptime.hourly, 'Share of successful probes per hour over the last 24 hours')}
    <h3>Downtime</h3>
    ${
      downtime.length === 0
        ? html`<p class="muted">No downtime recorded.</p>`
        : html`<table>
            <thead>
              <tr>
                <th scope="col">Started</th>
                <th scope="col">Duration</th>
                <th scope="col">Cause</th>
              </tr>
            </thead>
            <tbody>
              ${downtime.map(
                (d) =>
                  html`<tr>
                    <td>${d.startedAt.replace('T', ' ').slice(0, 16)} UTC</td>
                    <td>${Math.round(d.durationMs / 60_000)} min${d.ongoing ? ' (ongoing)' : ''}</td>
                    <td>${d.cause}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
  </section>`;
}

/** `audits`: the latest first; the chart draws the completed ones, the table the last eight. */
export function performanceCard(session: SignedInSession, siteId: string, audits: Audit[], now: number) {
  const base = `/sites/${siteId}`;
  const completed = audits.filter((a) => a.status === 'completed' && a.scorePerformance !== null).reverse();
  return html`<section class="card" aria-labelledby="perf-h">
    <h2 id="perf-h">Performance</h2>
    ${scoreLine(
      (['mobile', 'desktop'] as const).map((formFactor) => ({
        name: formFactor,
        points: completed
          .filter((a) => a.formFactor === formFactor)
          .map((a) => ({ at: a.queuedAt.getTime(), score: a.scorePerformance! })),
      })),
      `Lighthouse performance score over the last ${completed.length} audits, mobile and desktop`,
    )}
    <table>
      <thead>
        <tr>
          <th scope="col">Audit</th>
          <th scope="col">Score</th>
          <th scope="col">Form factor</th>
          <th scope="col">Report</th>
        </tr>
      </thead>
      <tbody>
        ${audits.slice(0, 8).map(
          (a) =>
            html`<tr>
              <td>${age(a.queuedAt, now)}</td>
              <td>${a.status === 'completed' ? score(a.scorePerformance) : badge(a.status)}</td>
              <td>${a.formFactor}</td>
              <td>
                ${a.status === 'completed' && a.reportBytes !== null ? html`<a href="${base}/audits/${a.id}/report">HTML report</a>` : '—'}
              </td>
            </tr>`,
        )}
      </tbody>
    </table>
    <div class="actions">${action(session, `${base}/audits`, 'Run an audit now')}</div>
  </section>`;
}
