// The performance feature's door: what other features may use.
export { performanceSettingsSection } from './performance.settings.js';
