import { z } from '@hono/zod-openapi';
import { probeCauses } from './prober.js';
import { keywordModes, uptimeStatuses } from './uptime.table.js';

const causeDescription = `Why the probe failed: ${probeCauses.map((cause) => `\`${cause}\``).join(', ')}.`;

const KeywordSchema = z
  .object({
    text: z
      .string()
      .min(1)
      .max(200)
      .openapi({ description: 'Text looked for in the body (case-sensitive, in the first bytes up to the body cap).' }),
    mode: z
      .enum(keywordModes)
      .default('present')
      .openapi({ description: '`present`: the site is down when the text is missing; `absent`: when it appears.' }),
  })
  .openapi('UptimeKeyword');

export const MonitoringSettingsSchema = z
  .object({
    intervalSeconds: z.number().int(),
    timeoutMs: z.number().int(),
    expectedStatus: z
      .array(z.number().int())
      .nullable()
      .openapi({ description: 'Accepted final HTTP statuses; null accepts any 2xx or 3xx after following redirects.' }),
    keyword: KeywordSchema.nullable(),
    paused: z.boolean().openapi({ description: 'A paused site is not probed.' }),
  })
  .openapi('MonitoringSettings');

export const MonitoringSettingsInput = z
  .object({
    intervalSeconds: z
      .number()
      .int()
      .min(10)
      .max(86_400)
      .nullable()
      .optional()
      .openapi({ description: 'Seconds between probes (10–86400); null restores the default.' }),
    timeoutMs: z.number().int().min(500).max(60_000).nullable().optional().openapi({
      description: 'Time limit of one probe in ms (500–60000, less than the interval); null restores the default.',
    }),
    expectedStatus: z
      .array(z.number().int().min(100).max(599))
      .min(1)
      .max(20)
      .nullable()
      .optional()
      .openapi({ description: 'Accepted final statuses; null: any 2xx or 3xx.' }),
    keyword: KeywordSchema.nullable()
      .optional()
      .openapi({ description: 'Text that must (or must not) appear in the body; null removes it.' }),
    paused: z.boolean().optional(),
  })
  .strict()
  .openapi('MonitoringSettingsInput');

/** What the site listing shows; null for sites that are not monitored (not connected). */
export const SiteUptimeStatusSchema = z
  .object({
    status: z.enum(uptimeStatuses),
    since: z.string().nullable().openapi({ description: 'When the status began; for `down`, the first failed probe.' }),
    lastCheckedAt: z.string().nullable(),
    responseTimeMs: z.number().int().nullable().openapi({ description: 'Of the last probe.' }),
    paused: z.boolean(),
  })
  .nullable()
  .openapi('SiteUptimeStatus');

const ProbeSchema = z
  .object({
    at: z.string(),
    up: z.boolean(),
    httpStatus: z.number().int().nullable(),
    responseTimeMs: z.number().int().nullable(),
    cause: z.enum(probeCauses).nullable().openapi({ description: causeDescription }),
  })
  .openapi('UptimeProbe');

const ResponseTimes = z.object({
  avg: z.number().int().nullable(),
  min: z.number().int().nullable(),
  max: z.number().int().nullable(),
});

const HourlyBucketSchema = z
  .object({ hour: z.string(), up: z.number().int(), down: z.number().int(), responseTimeMs: ResponseTimes })
  .openapi('UptimeHourlyBucket');

const Percent = z.number().nullable().openapi({
  description: 'Percentage of successful probes (0–100, two decimals); null without probes in the window.',
});

export const UptimeReportSchema = z
  .object({
    siteId: z.string(),
    status: z
      .enum(uptimeStatuses)
      .openapi({ description: '`unknown` until the first probe (and for sites not connected).' }),
    since: z.string().nullable(),
    lastCheckedAt: z.string().nullable(),
    lastResponseTimeMs: z.number().int().nullable(),
    monitoring: MonitoringSettingsSchema,
    uptimePercent: z.object({ last24h: Percent, last7d: Percent, last30d: Percent }),
    certificate: z
      .object({
        expiresAt: z.string(),
        daysLeft: z.number().int(),
        expiringSoon: z.boolean().openapi({ description: 'Within `SITEWARDEN_UPTIME_CERT_WARNING_DAYS`.' }),
      })
      .nullable()
      .openapi({ description: 'The https certificate last seen; null for http sites.' }),
    recentProbes: z.array(ProbeSchema).openapi({ description: 'The latest probes, newest first.' }),
    hourly: z
      .array(HourlyBucketSchema)
      .openapi({ description: 'The last 24 hours, oldest first (hours without probes are left out).' }),
  })
  .openapi('UptimeReport');

export const DowntimeEventSchema = z
  .object({
    id: z.string(),
    startedAt: z.string().openapi({ description: 'The first failed probe.' }),
    endedAt: z
      .string()
      .nullable()
      .openapi({ description: 'The first successful probe after; null while the site is still down.' }),
    durationMs: z.number().int().openapi({ description: 'Until `endedAt`, or until now while ongoing.' }),
    ongoing: z.boolean(),
    cause: z.enum(probeCauses).openapi({ description: causeDescription }),
  })
  .openapi('DowntimeEvent');

export const DowntimeQuery = z.object({
  from: z.iso
    .datetime({ offset: true })
    .optional()
    .openapi({ description: 'Only events still going on at or after this time (ISO 8601).' }),
  to: z.iso
    .datetime({ offset: true })
    .optional()
    .openapi({ description: 'Only events that started at or before this time (ISO 8601).' }),
});

export type MonitoringSettingsView = z.infer<typeof MonitoringSettingsSchema>;
export type MonitoringSettingsPatch = z.infer<typeof MonitoringSettingsInput>;
export type SiteUptimeStatus = z.infer<typeof SiteUptimeStatusSchema>;
export type UptimeReport = z.infer<typeof UptimeReportSchema>;
export type DowntimeEventView = z.infer<typeof DowntimeEventSchema>;
