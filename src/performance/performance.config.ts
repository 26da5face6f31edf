import type { PerformanceConfig } from './performance.service.js';

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
