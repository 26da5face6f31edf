import { readFile } from 'node:fs/promises';
import { Hono } from 'hono';
import { compress } from 'hono/compress';
import { createActivityPage } from './activity.page.js';
import { createAdminLoginPage } from './admin-login.page.js';
import { createAssetRoutes } from './assets.js';
import type { DashboardServices } from './deps.js';
import { CONNECTION_RESULT_PATH, createConnectionPages } from './connection.page.js';
import { createOverviewPage } from './overview.page.js';
import { requireSession, type DashboardEnv } from './session.js';
import { securityHeaders } from './security.js';
import { createSignInRoutes } from './sign-in.routes.js';
import { OIDC_CALLBACK_PATH, SINGLE_SIGN_ON_PATH, type SingleSignOn } from './single-sign-on.routes.js';
import { requireTwoFactorEnrolment, SIGN_IN_CODE_PATH } from './two-factor.page.js';
import { createSiteActions } from './site-actions.routes.js';
import { createSiteSelectionRoutes } from './site-selection.routes.js';
import { createSitePage, noSuchSite } from './site.page.js';
import { createSafeUpdatesPages } from './safe-updates.page.js';
import { createUpdatesPage } from './updates.page.js';
import { createUpdateHistoryPage } from './update-history.js';
import { createFleetItemsPages } from './fleet-items.page.js';
import { createBulkUpdatesPages } from './bulk-updates.page.js';
import { createPoliciesPages } from './policies.page.js';
import { createBackupsPage } from './backups.page.js';
import { createSettingsPage } from './settings.page.js';
import { createRollbackRoutes } from './rollback.routes.js';
import { auditDashboard, createAuditPage } from './audit.page.js';
import type { AuditLogService } from '../audit/index.js';

export type { DashboardServices } from './deps.js';
export { connectionResultUrl } from './connection.page.js';

const ASSETS = ['favicon.svg', 'live.js'];

/** The paths behind the session; every other path outside /api stays the app's (404 problems, /healthz, /metrics). */
const SIGNED_IN_PATHS = [
  '/',
  '/sites/*',
  '/activity',
  '/updates',
  '/updates/*',
  '/backups',
  '/backups/*',
  '/settings',
  '/settings/*',
  '/events',
  '/connector.zip',
  '/fleet/*',
];
const PUBLIC_PATHS = [
  '/sign-in',
  SIGN_IN_CODE_PATH,
  SINGLE_SIGN_ON_PATH,
  OIDC_CALLBACK_PATH,
  '/sign-out',
  '/assets/*',
  CONNECTION_RESULT_PATH,
];

/** Whether a route path is one of the dashboard's (for the tests that list what the app serves). */
export const isDashboardPath = (path: string): boolean =>
  [...SIGNED_IN_PATHS, ...PUBLIC_PATHS].some((pattern) =>
    pattern.endsWith('/*') ? path.startsWith(pattern.slice(0, -1)) : path === pattern,
  );

/**
 * The web dashboard at `/`: pages rendered on the server from the features' services, forms
 * posted back to dashboard routes (session cookie + CSRF field), never to /api.
 */
export function createDashboard(deps: DashboardServices & { auditLog: AuditLogService; oidc?: SingleSignOn }) {
  const app = new Hono<DashboardEnv>();
  // Pages, styles and scripts gzipped (a 10,000-site overview page is ~90 KiB of HTML); never the event stream.
  const gzip = compress({ contentTypeFilter: /^(text\/html|text\/css|text\/javascript|image\/svg\+xml)/ });
  for (const path of [...SIGNED_IN_PATHS, ...PUBLIC_PATHS]) app.use(path, securityHeaders(), gzip);
  // The audit log: every form post, after its answer (sign-in attempts are recorded from their events).
  for (const path of [...SIGNED_IN_PATHS, '/sign-out']) app.use(path, auditDashboard(deps.auditLog));
  app.route('/', createAssetRoutes(ASSETS));
  app.route('/', createSignInRoutes({ users: deps.users, httpsPublicUrl: deps.httpsPublicUrl, oidc: deps.oidc }));
  const connection = createConnectionPages(deps);
  app.route('/', connection.result);
  const signedIn = new Hono<DashboardEnv>();
  // Site scopes: a page of a site outside a scoped user's tags is an unknown site's page.
  const scope = { checkSite: deps.sites.checkVisibleTo, hidden: noSuchSite };
  for (const path of SIGNED_IN_PATHS)
    signedIn.use(path, requireSession(deps.users, deps.httpsPublicUrl, scope), requireTwoFactorEnrolment(deps.users));
  signedIn.route(
    '/',
    createOverviewPage({
      overview: deps.fleetOverview,
      tagsOf: (ids) => deps.sites.tagsOf(ids),
      tagCounts: (scope) => deps.sites.tagCounts(scope),
      clock: deps.clock,
    }),
  );
  signedIn.route('/', connection.signedIn);
  signedIn.route('/', createSitePage(deps));
  signedIn.route('/', createSafeUpdatesPages(deps));
  signedIn.route('/', createActivityPage(deps));
  signedIn.route('/', createUpdateHistoryPage(deps));
  signedIn.route('/', createRollbackRoutes(deps));
  signedIn.route('/', createFleetItemsPages(deps));
  signedIn.route('/', createUpdatesPage(deps));
  signedIn.route('/', createBulkUpdatesPages(deps));
  signedIn.route('/', createPoliciesPages(deps));
  signedIn.route('/', createBackupsPage(deps));
  signedIn.route('/', createSettingsPage(deps));
  signedIn.route('/', createAuditPage(deps));
  signedIn.route('/', createSiteSelectionRoutes(deps));
  signedIn.route('/', createSiteActions(deps));
  signedIn.route('/', createAdminLoginPage(deps));
  signedIn.get('/connector.zip', async (c) => {
    const zip = await readFile(deps.connectorZipPath).catch(() => null);
    if (!zip) return c.text('The connector package has not been built: run npm run build.', 404);
    return c.body(new Uint8Array(zip), 200, {
      'content-type': 'application/zip',
      'content-disposition': 'attachment; filename="sitewarden-connector.zip"',
    });
  });
  app.route('/', signedIn);
  return app;
}
