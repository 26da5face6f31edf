// The performance feature's door: what other features may use.
export { performanceSettingsSection } from './performance.settings.js';
export { chromeFlags } from './chrome-flags.js';
export { launchChromium } from './launch-chromium.js';
export { auditReportResponse } from './report-response.js';
