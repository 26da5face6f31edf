/**
 * The one summary table every suite ends with (`npm run bench -- NAME`, bench/run.ts): Markdown, so
 * it can go into docs/benchmarks.md as printed. One row per figure: this run's value, the baseline
 * measured in the same run (with the ratio where there is one), and the target, met or not.
 */
export interface SummaryRow {
  figure: string;
  value: string;
  /** The same work done the baseline's way in the same run, and the ratio to it where it has one. */
  baseline?: string;
  /** The target and whether this run meets it: `verdict(...)`. */
  target?: string;
}

/** `≤ 1.1×: met` or `≤ 1.1×: MISSED`. */
export function verdict(target: string, met: boolean): string {
  return `${target}: ${met ? 'met' : 'MISSED'}`;
}

export function printSummary(suite: string, rows: SummaryRow[]): void {
  const cell = (text = '') => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const when = new Date().toISOString().slice(0, 16).replace('T', ' ');
  console.log(
    [
      '',
      `summary: ${suite}, ${when} UTC`,
      '',
      '| figure | this run | baseline, same run | target |',
      '|---|---|---|---|',
      ...rows.map(
        (row) => `| ${cell(row.figure)} | ${cell(row.value)} | ${cell(row.baseline)} | ${cell(row.target)} |`,
      ),
    ].join('\n'),
  );
}
