import { z } from 'zod';
import { auditFailureReasons, type FormFactor } from './performance.table.js';

/**
 * The daemon and its audit worker (a child process, one per audit) talk in JSON: the request
 * on the worker's stdin, one message per line on its stdout. The worker imports types only from
 * here, so it shares nothing at run time with the daemon; the daemon checks each message line
 * against WorkerMessageSchema (a line that is not one is not the protocol's).
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

const score = z.number().nullable();
const AuditScoresSchema = z.object({ performance: score, accessibility: score, bestPractices: score, seo: score });
export type AuditScores = z.infer<typeof AuditScoresSchema>;

const AuditMetricsSchema = z.object({
  firstContentfulPaintMs: score,
  largestContentfulPaintMs: score,
  totalBlockingTimeMs: score,
  cumulativeLayoutShift: score,
  speedIndexMs: score,
  timeToFirstByteMs: score,
});
export type AuditMetrics = z.infer<typeof AuditMetricsSchema>;

const AuditSummarySchema = z.object({
  lighthouseVersion: z.string(),
  chromeVersion: z.string().nullable(),
  scores: AuditScoresSchema,
  metrics: AuditMetricsSchema,
  reportBytes: z.number(),
});
export type AuditSummary = z.infer<typeof AuditSummarySchema>;

export const WorkerMessageSchema = z.discriminatedUnion('type', [
  /** Chrome was launched in its own process group; the daemon kills that group if the worker hangs. */
  z.object({ type: z.literal('chrome'), pid: z.number().int() }),
  z.object({ type: z.literal('completed'), summary: AuditSummarySchema }),
  z.object({ type: z.literal('failed'), reason: z.enum(auditFailureReasons), message: z.string() }),
]);
export type WorkerMessage = z.infer<typeof WorkerMessageSchema>;
