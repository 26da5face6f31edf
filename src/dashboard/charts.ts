import { html } from 'hono/html';

/**
 * Charts drawn on the server as SVG (attributes only, no inline style, so the CSP holds): they
 * show before any script runs and cost no chart library. Each carries a text alternative.
 */

const W = 600;
const H = 120;

/** One bar per hour: height is the share of good probes, a failing hour marked by a red cap and the label. */
export function uptimeBars(hours: { hour: string; up: number; down: number }[], label: string) {
  if (hours.length === 0) return html`<p class="muted">No probes in the last 24 hours.</p>`;
  const slot = W / 24;
  const newest = Date.parse(hours[hours.length - 1]!.hour);
  return html`<svg class="chart" viewBox="0 0 ${W} ${H + 16}" role="img" aria-label="${label}">
    ${hours.map((bucket) => {
      const index = 23 - Math.round((newest - Date.parse(bucket.hour)) / 3_600_000);
      if (index < 0) return '';
      const total = bucket.up + bucket.down;
      const ratio = total === 0 ? 1 : bucket.up / total;
      const height = Math.max(2, ratio * H);
      const x = index * slot + 1;
      return html`<g>
        <title>${bucket.hour.slice(11, 16)} UTC: ${bucket.up} up, ${bucket.down} down</title>
        <rect
          class="${bucket.down > 0 ? 'bar-down' : 'bar-up'}"
          x="${x.toFixed(1)}"
          y="${(H - height).toFixed(1)}"
          width="${(slot - 2).toFixed(1)}"
          height="${height.toFixed(1)}"
        />
        ${
          bucket.down > 0
            ? html`<rect
                class="bar-fail"
                x="${x.toFixed(1)}"
                y="0"
                width="${(slot - 2).toFixed(1)}"
                height="${(H - height).toFixed(1)}"
              />`
            : ''
        }
      </g>`;
    })}
    <text x="0" y="${H + 13}" class="axis">24 h ago</text>
    <text x="${W}" y="${H + 13}" class="axis" text-anchor="end">now</text>
  </svg>`;
}

/**
 * Lines of scores (0–1) over one time axis, one per form factor (mobile solid, desktop dashed,
 * each named at its end: the colour is not the only sign), with a dot per audit.
 */
export function scoreLine(series: { name: string; points: { at: number; score: number }[] }[], label: string) {
  const drawn = series.filter((line) => line.points.length > 0);
  const all = drawn.flatMap((line) => line.points.map((p) => p.at));
  if (all.length === 0) return html`<p class="muted">No completed audits yet.</p>`;
  const first = Math.min(...all);
  const span = Math.max(1, Math.max(...all) - first);
  const x = (at: number) => (all.length === 1 ? W / 2 : 8 + ((at - first) / span) * (W - 40));
  const y = (score: number) => 8 + (1 - score) * (H - 16);
  return html`<svg class="chart" viewBox="0 0 ${W} ${H + 16}" role="img" aria-label="${label}">
    <line class="grid" x1="0" x2="${W}" y1="${y(0.9)}" y2="${y(0.9)}" />
    <line class="grid" x1="0" x2="${W}" y1="${y(0.5)}" y2="${y(0.5)}" />
    <text class="axis" x="0" y="${y(0.9) - 2}">90</text>
    <text class="axis" x="0" y="${y(0.5) - 2}">50</text>
    ${drawn.map((line) => {
      const path = line.points.map((p) => `${x(p.at).toFixed(1)},${y(p.score).toFixed(1)}`).join(' ');
      const last = line.points[line.points.length - 1]!;
      return html`<polyline class="line line-${line.name}" fill="none" points="${path}" />
        ${line.points.map(
          (p) =>
            html`<circle
              class="dot dot-${line.name}"
              cx="${x(p.at).toFixed(1)}"
              cy="${y(p.score).toFixed(1)}"
              r="3"
            />`,
        )}
        <text class="axis" x="${(x(last.at) + 5).toFixed(1)}" y="${(y(last.score) + 3).toFixed(1)}"
          >${line.name}</text
        >`;
    })}
  </svg>`;
}
