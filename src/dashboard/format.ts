import { html } from 'hono/html';

/** "3 min ago", "5 h ago", "12 d ago". */
export function age(at: number | Date | null, now: number): string {
  if (at === null) return '—';
  const ms = now - (typeof at === 'number' ? at : at.getTime());
  if (ms < 60_000) return 'just now';
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min ago`;
  if (ms < 86_400_000) return `${Math.floor(ms / 3_600_000)} h ago`;
  return `${Math.floor(ms / 86_400_000)} d ago`;
}

/** "1 site", "3 sites". */
export const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

export const percent = (ratio: number | null, digits = 2) =>
  ratio === null ? '—' : `${(ratio * 100).toFixed(ratio === 1 ? 0 : digits)}%`;

export const score = (value: number | null) => (value === null ? '—' : String(Math.round(value * 100)));

/** A status word with its symbol, so colour is never the only signal. */
const STATUS_SYMBOL: Record<string, string> = {
  up: '●',
  down: '▼',
  degraded: '◆',
  unknown: '?',
  pending: '…',
  completed: '✓',
  succeeded: '✓',
  failed: '✗',
  partial: '◐',
  running: '↻',
  queued: '…',
  cancelled: '–',
  active: '●',
  inactive: '○',
  kept: '✓',
  'rolled-back': '↶',
  'rollback-failed': '✗',
};

export const badge = (status: string | null, label: string = status ?? 'none') =>
  status === null
    ? html`<span class="badge none">none</span>`
    : html`<span class="badge ${status}"
        ><span aria-hidden="true">${STATUS_SYMBOL[status] ?? '•'}</span> ${label}</span
      >`;

/** A score trend as a small inline SVG (no script, no styles: attributes only). */
export function sparkline(values: number[], label: string) {
  if (values.length < 2) return '';
  const width = 60;
  const height = 16;
  const step = width / (values.length - 1);
  const points = values
    .map((v, i) => `${(i * step).toFixed(1)},${(height - 1 - v * (height - 2)).toFixed(1)}`)
    .join(' ');
  return html`<svg
    class="spark"
    viewBox="0 0 ${width} ${height}"
    width="${width}"
    height="${height}"
    role="img"
    aria-label="${label}"
  >
    <polyline fill="none" stroke="currentColor" stroke-width="1.5" points="${points}" />
  </svg>`;
}
