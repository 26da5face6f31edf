import type { AuditFailureReason, FormFactor } from './performance.table.js';

/**
 * The daemon and its audit worker (a child process, one per audit) talk in JSON: the request
 * on the worker's stdin, one message per line on its stdout. Kept to types only so the worker
 * shares nothing at run time with the daemon.
 */
export interface AuditRequest {
  url: string;
  formFactor: FormFactor;
  runs: number;
  chromePath: string;
  /** Unique to the audit; each run gets a fresh Chrome profile below it. */
  workDir: string;
  /** Where the gzip HTML report of the median run goes. */
  reportPath: string;
  /** Lighthouse's own wait for the page load, below the daemon's hard limit. */
  maxWaitForLoadMs: number;
  /** Confine Chrome to the audited host (and loopback); see chrome-flags.ts. */
  blockThirdParty: boolean;
  /**
   * The address the daemon resolved the audited host to and its network policy allowed: Chromium connects there
   * and nowhere else for that host (no lookup of its own). Null when the URL's host is an IP address (checked too).
   */
  address: string | null;
}

export interface AuditScores {
  performance: number | null;
  accessibility: number | null;
  bestPractices: number | null;
  seo: number | null;
}

export interface AuditMetrics {
  firstContentfulPaintMs: number | null;
  largestContentfulPaintMs: number | null;
  totalBlockingTimeMs: number | null;
  cumulativeLayoutShift: number | null;
  speedIndexMs: number | null;
  timeToFirstByteMs: number | null;
}

export interface AuditSummary {
  lighthouseVersion: string;
  chromeVersion: string | null;
  scores: AuditScores;
  metrics: AuditMetrics;
  reportBytes: number;
}

export type WorkerMessage =
  /** Chrome was launched in its own process group; the daemon kills that group if the worker hangs. */
  | { type: 'chrome'; pid: number }
  | { type: 'completed'; summary: AuditSummary }
  | { type: 'failed'; reason: AuditFailureReason; message: string };
