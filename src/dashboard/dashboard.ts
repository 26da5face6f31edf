import { readFile } from 'node:fs/promises';
import { Hono } from 'hono';
import type { Clock } from '../shared/clock.js';
import type { UsersService } from '../users/index.js';
import { createAssetRoutes } from './assets.js';
import type { FleetOverviewQuery } from './fleet-overview.query.js';
import { createOverviewPage, type OverviewDeps } from './overview.page.js';
import { requireSession, type DashboardEnv } from './session.js';
import { securityHeaders } from './security.js';
import { createSignInRoutes } from './sign-in.routes.js';
import { createSiteActions, type SiteActionsDeps } from './site-actions.routes.js';

export interface DashboardDeps extends Omit<OverviewDeps, 'overview'>, SiteActionsDeps {
  users: UsersService;
  overview: FleetOverviewQuery;
  clock: Clock;
  connectorZipPath: string;
  /** The daemon's public URL is https (a TLS proxy in front): cookies are `Secure` even on plain-http requests. */
  httpsPublicUrl: boolean;
}

export const DASHBOARD_ASSETS = ['dashboard.css', 'favicon.svg'];

/**
 * The web dashboard at `/`: pages rendered on the server from the features' services, forms
 * posted back to dashboard routes (session cookie + CSRF field), never to /api.
 */
export function createDashboard(deps: DashboardDeps) {
  const app = new Hono<DashboardEnv>();
  app.use('*', securityHeaders());
  app.route('/', createAssetRoutes(DASHBOARD_ASSETS));
  app.route('/', createSignInRoutes(deps));
  const signedIn = new Hono<DashboardEnv>();
  signedIn.use('*', requireSession(deps.users));
  signedIn.route('/', createOverviewPage(deps));
  signedIn.route('/', createSiteActions(deps));
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
