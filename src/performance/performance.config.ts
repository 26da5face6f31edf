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
