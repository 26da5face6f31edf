/**
 * Real WordPress sites for integration tests. Needs the run's global setup
 * (test/support/global-setup.ts) for MariaDB and the plugin-directory mirror.
 */
export { createTestSite } from './test-site.js';
export type { CreateTestSiteOptions, TestSite, TestUser } from './test-site.js';
export { approveApplicationAuthorization } from './approve-application.js';
export { NEWEST_RELEASE } from './releases.js';
