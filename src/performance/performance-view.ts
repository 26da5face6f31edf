import type { z } from '@hono/zod-openapi';
import type { AuditSchema } from './performance.schemas.js';
import type { AuditRow } from './performance.table.js';

export type AuditView = z.infer<typeof AuditSchema>;

export function toAuditView(row: AuditRow): AuditView {
  const completed = row.status === 'completed';
  return {
    id: row.id,
    siteId: row.siteId,
    url: row.url,
    formFactor: row.formFactor,
    trigger: row.trigger,
    runs: row.runs,
    status: row.status,
    queuedAt: row.queuedAt.toISOString(),
    startedAt: row.startedAt?.toISOString() ?? null,
    finishedAt: row.finishedAt?.toISOString() ?? null,
    versions: { lighthouse: row.lighthouseVersion, chromium: row.chromeVersion },
    scores: completed
      ? {
          performance: row.scorePerformance,
          accessibility: row.scoreAccessibility,
          bestPractices: row.scoreBestPractices,
          seo: row.scoreSeo,
        }
      : null,
    metrics: completed
      ? {
          firstContentfulPaintMs: row.firstContentfulPaintMs,
          largestContentfulPaintMs: row.largestContentfulPaintMs,
          totalBlockingTimeMs: row.totalBlockingTimeMs,
          cumulativeLayoutShift: row.cumulativeLayoutShift,
          speedIndexMs: row.speedIndexMs,
          timeToFirstByteMs: row.timeToFirstByteMs,
        }
      : null,
    failure:
      row.status === 'failed' && row.failureReason
        ? { reason: row.failureReason, message: row.failureMessage ?? '' }
        : null,
    report:
      row.reportBytes === null
        ? null
        : { url: `/api/sites/${row.siteId}/performance/${row.id}/report`, bytes: row.reportBytes },
  };
}
