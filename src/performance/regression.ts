import type { AuditMetrics, AuditScores } from './audit-protocol.js';

/** What regression detection looks at: the performance score and the core timing metrics. */
export interface AuditFigures {
  scores: Pick<AuditScores, 'performance'>;
  metrics: Pick<
    AuditMetrics,
    'firstContentfulPaintMs' | 'largestContentfulPaintMs' | 'totalBlockingTimeMs' | 'cumulativeLayoutShift'
  >;
}

export interface Regression {
  measure:
    | 'performance'
    | 'firstContentfulPaintMs'
    | 'largestContentfulPaintMs'
    | 'totalBlockingTimeMs'
    | 'cumulativeLayoutShift';
  /** The median of the recent audits. */
  before: number;
  after: number;
}

/** Fewer earlier audits than this and there is no "usual" to compare with. */
const MIN_HISTORY = 3;
/** Changes smaller than these are noise whatever the percentage (a 0 ms TBT going to 30 ms). */
const NOISE_FLOOR: Record<Regression['measure'], number> = {
  performance: 0.02,
  firstContentfulPaintMs: 100,
  largestContentfulPaintMs: 100,
  totalBlockingTimeMs: 50,
  cumulativeLayoutShift: 0.02,
};

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * Compares an audit with the median of the recent ones (same site and form factor): the score
 * regressed when it is lower by more than `marginPercent` percent of the median, a metric when
 * it is higher by more than that, and in both cases by more than the noise floor.
 */
export function detectRegressions(current: AuditFigures, recent: AuditFigures[], marginPercent: number): Regression[] {
  const margin = marginPercent / 100;
  const found: Regression[] = [];
  const compare = (
    measure: Regression['measure'],
    pick: (figures: AuditFigures) => number | null,
    higherIsWorse: boolean,
  ) => {
    const after = pick(current);
    const history = recent.map(pick).filter((value): value is number => value !== null && Number.isFinite(value));
    if (after === null || history.length < MIN_HISTORY) return;
    const before = median(history);
    const worseBy = higherIsWorse ? after - before : before - after;
    if (worseBy > before * margin && worseBy > NOISE_FLOOR[measure]) found.push({ measure, before, after });
  };
  compare('performance', (figures) => figures.scores.performance, false);
  compare('firstContentfulPaintMs', (figures) => figures.metrics.firstContentfulPaintMs, true);
  compare('largestContentfulPaintMs', (figures) => figures.metrics.largestContentfulPaintMs, true);
  compare('totalBlockingTimeMs', (figures) => figures.metrics.totalBlockingTimeMs, true);
  compare('cumulativeLayoutShift', (figures) => figures.metrics.cumulativeLayoutShift, true);
  return found;
}
