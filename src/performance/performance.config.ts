import { z } from 'zod';
import { defineSettings, positiveInt } from '../shared/settings.js';

/** The performance feature's configuration (the SITEWARDEN_PERFORMANCE_* variables, read by config.ts). */
export interface PerformanceConfig {
  chromePath: string;
  concurrency: number;
  /** Hard limit of one Lighthouse run; an audit of n runs gets n times this. */
  timeoutMs: number;
  defaultRuns: number;
  intervalHours: number;
  reportRetentionDays: number;
  regressionMarginPercent: number;
  blockThirdParty: boolean;
  /** Scheduling priority (nice, 0–19) of the audit worker and its Chromium: the daemon keeps the CPU it needs. */
  nice: number;
}

const DEFAULT_CHROME_PATH = '/usr/bin/chromium';

/** The defaults of the SITEWARDEN_PERFORMANCE_* variables (config.ts reads the environment). */
export const DEFAULT_PERFORMANCE_CONFIG: PerformanceConfig = {
  chromePath: DEFAULT_CHROME_PATH,
  // Lighthouse's own guidance: never two audits at once on one machine.
  concurrency: 1,
  timeoutMs: 120_000,
  defaultRuns: 1,
  intervalHours: 24,
  reportRetentionDays: 30,
  regressionMarginPercent: 10,
  blockThirdParty: true,
  nice: 10,
};

const P = DEFAULT_PERFORMANCE_CONFIG;
const NICE = 'SITEWARDEN_PERFORMANCE_NICE must be a whole number from 0 to 19';

/** SITEWARDEN_PERFORMANCE_* and CHROME_PATH, read by src/config.ts. */
export const PERFORMANCE_SETTINGS = defineSettings({
  // Read where tools conventionally look for it (chrome-launcher, Puppeteer): no schema, config.ts reads it.
  CHROME_PATH: {
    default: DEFAULT_CHROME_PATH,
    doc: 'the Chromium that performance audits drive (Debian’s `chromium`; never a downloaded browser)',
    comment:
      "Performance audits (Lighthouse in Debian's chromium): the browser, audits at once, the hard\ntime limit of one Lighthouse run, default runs per audit, time between scheduled audits, how\nlong full reports are kept, the regression margin, and whether pages may load third-party hosts.",
  },
  SITEWARDEN_PERFORMANCE_CONCURRENCY: {
    schema: positiveInt('SITEWARDEN_PERFORMANCE_CONCURRENCY', P.concurrency, 16),
    default: String(P.concurrency),
    doc: 'Lighthouse audits at once (Lighthouse’s advice: one per machine)',
  },
  SITEWARDEN_PERFORMANCE_TIMEOUT_MS: {
    schema: positiveInt('SITEWARDEN_PERFORMANCE_TIMEOUT_MS', P.timeoutMs, 900_000),
    default: String(P.timeoutMs),
    doc: 'hard time limit of one Lighthouse run; an audit of n runs gets n times this, then it and its Chromium are killed',
  },
  SITEWARDEN_PERFORMANCE_RUNS: {
    schema: positiveInt('SITEWARDEN_PERFORMANCE_RUNS', P.defaultRuns, 9),
    default: String(P.defaultRuns),
    doc: 'default Lighthouse runs per audit (at most 9; Lighthouse’s median run is kept; per site: settings route)',
  },
  SITEWARDEN_PERFORMANCE_INTERVAL_HOURS: {
    schema: positiveInt('SITEWARDEN_PERFORMANCE_INTERVAL_HOURS', P.intervalHours, 24 * 31),
    default: String(P.intervalHours),
    doc: 'time between scheduled audits of a site; sites are spread over the interval (per site: `performance.intervalHours` in `PATCH /api/sites/{id}`)',
  },
  SITEWARDEN_PERFORMANCE_REPORT_RETENTION_DAYS: {
    schema: positiveInt('SITEWARDEN_PERFORMANCE_REPORT_RETENTION_DAYS', P.reportRetentionDays, 36_500),
    default: String(P.reportRetentionDays),
    doc: 'how long full HTML reports are kept on disk (scores and metrics stay)',
  },
  SITEWARDEN_PERFORMANCE_REGRESSION_MARGIN_PERCENT: {
    schema: positiveInt('SITEWARDEN_PERFORMANCE_REGRESSION_MARGIN_PERCENT', P.regressionMarginPercent, 100),
    default: String(P.regressionMarginPercent),
    doc: 'how much worse than the recent median an audit must be to log `performance.regressed`',
  },
  SITEWARDEN_PERFORMANCE_THIRD_PARTY: {
    schema: z
      .enum(['block', 'allow'], { error: 'SITEWARDEN_PERFORMANCE_THIRD_PARTY must be block or allow' })
      .default(P.blockThirdParty ? 'block' : 'allow'),
    default: P.blockThirdParty ? 'block' : 'allow',
    doc: '`block`: audited pages reach only their own host (third-party scripts, fonts and CDNs fail, as if offline); `allow`: pages load everything, as visitors see them',
  },
  SITEWARDEN_PERFORMANCE_NICE: {
    schema: z.coerce.number({ error: NICE }).int(NICE).min(0, NICE).max(19, NICE).default(P.nice),
    default: String(P.nice),
    doc: "scheduling priority (nice, 0–19) of the audit worker and its Chromium, so audits take the CPU the daemon leaves (0: the daemon's own)",
    comment: 'Nice value (0-19) of audit workers and their Chromium: audits yield the CPU to the daemon.',
  },
});
