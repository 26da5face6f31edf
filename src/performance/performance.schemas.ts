import { z } from '@hono/zod-openapi';
import { auditFailureReasons, auditStatuses, auditTriggers, formFactors } from './performance.table.js';

export const AuditIdParam = z.object({
  siteId: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'siteId', in: 'path' }, example: 'site_01jc0z6x8m3yq4x0h7a9b2c3d4' }),
  auditId: z
    .string()
    .regex(/^perf_[0-9a-z]{26}$/, 'not an audit id')
    .openapi({ param: { name: 'auditId', in: 'path' }, example: 'perf_01jc0z6x8m3yq4x0h7a9b2c3d4' }),
});

const score = z.number().min(0).max(1).nullable();
const milliseconds = z.number().nullable();

export const AuditSchema = z
  .object({
    id: z.string(),
    siteId: z.string(),
    url: z.string().openapi({ description: 'The page audited: the site’s home URL.' }),
    formFactor: z.enum(formFactors),
    trigger: z.enum(auditTriggers),
    runs: z
      .number()
      .int()
      .openapi({ description: 'Lighthouse runs; with more than one, Lighthouse’s median run is kept.' }),
    status: z.enum(auditStatuses),
    queuedAt: z.string(),
    startedAt: z.string().nullable(),
    finishedAt: z.string().nullable(),
    versions: z.object({ lighthouse: z.string().nullable(), chromium: z.string().nullable() }),
    scores: z
      .object({ performance: score, accessibility: score, bestPractices: score, seo: score })
      .nullable()
      .openapi({ description: 'Lighthouse category scores, 0 to 1; null until the audit completes.' }),
    metrics: z
      .object({
        firstContentfulPaintMs: milliseconds,
        largestContentfulPaintMs: milliseconds,
        totalBlockingTimeMs: milliseconds,
        cumulativeLayoutShift: z.number().nullable(),
        speedIndexMs: milliseconds,
        timeToFirstByteMs: milliseconds.openapi({ description: 'Lighthouse’s server response time of the document.' }),
      })
      .nullable(),
    failure: z
      .object({ reason: z.enum(auditFailureReasons), message: z.string() })
      .nullable()
      .openapi({ description: 'Why a failed audit failed; `reason` is stable, `message` is for people.' }),
    report: z
      .object({ url: z.string(), bytes: z.number().int().openapi({ description: 'Size of the gzip report on disk.' }) })
      .nullable()
      .openapi({
        description: 'The full HTML report, while it is kept (`SITEWARDEN_PERFORMANCE_REPORT_RETENTION_DAYS`).',
      }),
  })
  .openapi('PerformanceAudit');

export const PerformanceOverviewSchema = z
  .object({
    latest: z
      .object({ mobile: AuditSchema.nullable(), desktop: AuditSchema.nullable() })
      .openapi({ description: 'The latest completed audit per form factor.' }),
    history: z.object({
      items: z.array(AuditSchema).openapi({ description: 'Audits, newest first, failed ones included.' }),
      nextCursor: z
        .string()
        .nullable()
        .openapi({ description: 'Pass as `cursor` to get the next page; null on the last page.' }),
    }),
  })
  .openapi('PerformanceOverview');

export const HistoryQuery = z.object({
  formFactor: z.enum(formFactors).optional().openapi({ description: 'Only audits of this form factor.' }),
  from: z.iso
    .datetime({ offset: true })
    .optional()
    .openapi({ description: 'Only audits queued at or after this time (ISO 8601).' }),
  to: z.iso
    .datetime({ offset: true })
    .optional()
    .openapi({ description: 'Only audits queued at or before this time (ISO 8601).' }),
});

export const RequestAuditInput = z
  .object({
    formFactor: z
      .enum(formFactors)
      .optional()
      .openapi({ description: 'Default: the first of the site’s form factors (mobile unless changed).' }),
    runs: z.coerce
      .number()
      .int()
      .min(1)
      .max(9)
      .optional()
      .openapi({ description: 'Lighthouse runs (median kept); default the site’s setting.' }),
  })
  .openapi('RequestAuditInput');

export const PerformanceSettingsSchema = z
  .object({
    enabled: z
      .boolean()
      .openapi({ description: 'Whether scheduled audits run for the site (on-demand audits always can).' }),
    formFactors: z
      .array(z.enum(formFactors))
      .min(1)
      .openapi({ description: 'Form factors audited at each scheduled slot.' }),
    runs: z
      .number()
      .int()
      .min(1)
      .max(9)
      .openapi({ description: 'Lighthouse runs per audit; Lighthouse’s median run is kept.' }),
    intervalHours: z.number().int().min(1).max(744).openapi({
      description:
        'Hours between scheduled audits (the site’s own, else `SITEWARDEN_PERFORMANCE_INTERVAL_HOURS`); each site’s audits fall at a fixed offset into the interval.',
    }),
  })
  .openapi('PerformanceSettings');

export const UpdatePerformanceSettingsInput = PerformanceSettingsSchema.extend({
  intervalHours: PerformanceSettingsSchema.shape.intervalHours
    .nullable()
    .openapi({ description: 'Hours between scheduled audits (1–744); null restores the default.' }),
})
  .partial()
  .strict()
  .openapi('UpdatePerformanceSettingsInput');
