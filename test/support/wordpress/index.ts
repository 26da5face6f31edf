/**
 * Real WordPress sites for integration tests. Needs the run's global setup
 * (test/support/global-setup.ts) for MariaDB and the plugin-directory mirror.
 */
export { createTestSite, provisionTestSite } from './test-site.js';
export type { CreateTestSiteOptions, TestBed, TestSite, TestUser, TestUserRole } from './test-site.js';
export { approveApplicationAuthorization } from './approve-application.js';
export type { ApprovalResult } from './approve-application.js';
