import { OpenAPIHono } from '@hono/zod-openapi';
import type { Logger } from 'pino';
import { createConnectorRoutes } from './connector/connector.routes.js';
import { createPluginsRoutes } from './plugins/plugins.routes.js';
import type { PluginsService } from './plugins/plugins.service.js';
import { createThemesRoutes } from './themes/themes.routes.js';
import { createWordPressUpdatesRoutes, type WordPressUpdatesService } from './wordpress-updates/index.js';
import { createUptimeRoutes } from './uptime/uptime.routes.js';
import type { UptimeService } from './uptime/uptime.service.js';
import { createPerformanceRoutes } from './performance/performance.routes.js';
import type { PerformanceService } from './performance/performance.service.js';
import { createBackupsRoutes } from './backups/backups.routes.js';
import { createRetentionRoutes } from './backups/retention.routes.js';
import { createTargetsRoutes } from './backups/targets.routes.js';
import type { BackupsService } from './backups/backups.service.js';
import type { ThemesService } from './themes/themes.service.js';
import type { InventoryRepository } from './inventory/inventory.repository.js';
import { createBulkUpdatesRoutes, type BulkUpdatesService } from './bulk-updates/index.js';
import { createFleetRoutes, type FleetRefresh, type FleetRepository } from './fleet/index.js';
import { createFleetActionsRoutes, type FleetActions } from './fleet-actions/index.js';
import { createUpdatePoliciesRoutes, type UpdatePoliciesService } from './update-policies/index.js';
import { createInventoryRoutes } from './inventory/index.js';
import { visibleSites, type SitesRepository } from './sites/index.js';
import { createAuthorizationRoutes, createSiteSettingsRoutes, createSitesRoutes } from './site-overview/index.js';
import { backupSettingsSection } from './backups/index.js';
import { performanceSettingsSection } from './performance/index.js';
import { monitoringSettingsSection } from './uptime/index.js';
import { adminLoginSettingsSection, createAdminLoginRoutes, type AdminLoginService } from './admin-login/index.js';
import { AUTHORIZATION_CALLBACK_PATH, type SitesService } from './sites/sites.service.js';
import type { TokensService } from './tokens/tokens.service.js';
import { createTokensRoutes } from './tokens/tokens.routes.js';
import { createWebhooksRoutes } from './webhooks/webhooks.routes.js';
import type { WebhooksService } from './webhooks/webhooks.service.js';
import { createJobsRoutes } from './jobs/jobs.routes.js';
import type { JobRunner } from './jobs/job-runner.js';
import { createHealthCheckRoutes } from './metrics/health-checks.routes.js';
import type { Metrics } from './metrics/metrics.js';
import { createMetricsRoutes, requestMetrics } from './metrics/metrics.routes.js';
import type { Readiness } from './metrics/readiness.js';
import type { AuthFailureLimiter } from './http/auth-rate-limit.js';
import type { Clock } from './shared/clock.js';
import type { Events } from './shared/event-bus.js';
import { bearerAuth, type AppEnv } from './http/auth.js';
import { requirePermission } from './http/permissions.js';
import { clientAddressMiddleware, type TrustedProxies } from './http/client-address.js';
import { createHealthRoutes } from './http/health.routes.js';
import { createOverloadGuard, type LagSource } from './http/overload.js';
import { createSafeUpdatesRoutes, type SafeUpdatesService } from './safe-updates/index.js';
import { answerUnknownRoutes, createApiRouter, limitRequestBodies } from './http/api-router.js';
import { createErrorHandler } from './http/problem.js';
import { createUsersRoutes, type OidcSignIn, type UsersService } from './users/index.js';
import { connectionResultUrl, createDashboard } from './dashboard/dashboard.js';
import type { FleetOverviewQuery } from './dashboard/fleet-overview.query.js';
import { auditRequests, createAuditRoutes, type AuditLogService } from './audit/index.js';

export interface AppDeps {
  tokens: TokensService;
  sites: SitesService;
  inventories: Pick<InventoryRepository, 'read' | 'details'>;
  sitesRepository: Pick<SitesRepository, 'findById'>;
  fleet: FleetRepository;
  fleetRefresh: FleetRefresh;
  fleetActions: FleetActions;
  updatePolicies: UpdatePoliciesService;
  plugins: PluginsService;
  themes: ThemesService;
  wordpressUpdates: WordPressUpdatesService;
  bulkUpdates: BulkUpdatesService;
  uptime: UptimeService;
  performance: PerformanceService;
  backups: BackupsService;
  safeUpdates: SafeUpdatesService;
  adminLogin: AdminLoginService;
  webhooks: WebhooksService;
  jobs: JobRunner;
  connectorZipPath: string;
  logger: Logger;
  version: string;
  checkDatabase: () => boolean;
  /** /readyz's checks; without them /readyz checks only that the database answers. */
  readiness?: Readiness;
  /** Request metrics, and `GET /metrics` (with a token) unless it is served on its own listener. */
  metrics?: Metrics;
  metricsOnOwnListener?: boolean;
  /** Refuses addresses that sent too many bad tokens; none in tests that do not ask for it. */
  authLimiter?: AuthFailureLimiter;
  /** Proxies whose X-Forwarded-For names the client (SITEWARDEN_TRUSTED_PROXIES); none: the peer's address is the client's. */
  trustedProxies?: TrustedProxies;
  /**
   * Shed dashboard and API requests (503 `overloaded`) while the event loop lags past `boundMs`
   * (SITEWARDEN_OVERLOAD_LAG_MS; http/overload.ts). Absent or 0: never. `lag`: the process's sampler
   * unless a test brings its own.
   */
  overload?: { boundMs: number; lag?: LagSource };
  /** The web dashboard at `/`. */
  users: UsersService;
  fleetOverview: FleetOverviewQuery;
  httpsPublicUrl: boolean;
  clock: Clock;
  events: Events;
  /** Every state-changing request, recorded by the middleware below (and the dashboard's). */
  auditLog: AuditLogService;
  /** Single sign-on on the sign-in page (SITEWARDEN_OIDC_*, users/oidc.service.ts); none: passwords only. */
  oidc?: OidcSignIn;
}

const PUBLIC_PATHS = new Set(['/api/health', AUTHORIZATION_CALLBACK_PATH]);

/** The whole HTTP API; tests call `app.request()` on it, main.ts serves it. */
export function createApp(deps: AppDeps) {
  const api = createApiRouter();
  // First, so it sees every answer (refusals by the middlewares below included) once it is decided.
  api.use(
    '*',
    auditRequests({
      auditLog: deps.auditLog,
      source: 'api',
      anonymous: (c) => c.res.status === 401 && c.req.header('authorization') !== undefined,
    }),
  );
  api.use('*', limitRequestBodies());
  const onLimited = deps.metrics ? () => deps.metrics!.noteRateLimited() : undefined;
  api.use('*', bearerAuth({ tokens: deps.tokens, publicPaths: PUBLIC_PATHS, limiter: deps.authLimiter, onLimited }));
  // The one permission check (http/permissions.ts): the matched route's required role against the token's.
  api.use('*', requirePermission({ checkSite: (siteId, access) => deps.sites.checkVisible(siteId, access.sites) }));

  api.route('/', createHealthRoutes(deps));
  api.route('/', createAuthorizationRoutes({ ...deps, authorizationLanding: connectionResultUrl }));
  api.route('/', createSitesRoutes(deps));
  api.route(
    '/',
    createSiteSettingsRoutes({
      // The order of the sections in GET /api/sites/{id}/settings and in the OpenAPI document.
      settingsSections: {
        monitoring: monitoringSettingsSection(deps.uptime),
        backups: backupSettingsSection(deps.backups),
        performance: performanceSettingsSection(deps.performance),
        adminLogin: adminLoginSettingsSection(deps.adminLogin),
      },
    }),
  );
  api.route('/', createUptimeRoutes(deps));
  api.route('/', createPerformanceRoutes(deps));
  api.route('/', createBackupsRoutes(deps));
  api.route('/', createRetentionRoutes(deps));
  api.route('/', createTargetsRoutes(deps));
  api.route('/', createPluginsRoutes(deps));
  api.route('/', createThemesRoutes(deps));
  api.route('/', createWordPressUpdatesRoutes(deps));
  api.route('/', createSafeUpdatesRoutes(deps));
  api.route('/', createAdminLoginRoutes(deps));
  api.route('/', createFleetRoutes(deps));
  api.route('/', createFleetActionsRoutes(deps));
  api.route('/', createBulkUpdatesRoutes(deps));
  api.route('/', createUpdatePoliciesRoutes(deps));
  api.route('/', createInventoryRoutes(deps));
  api.route('/', createWebhooksRoutes(deps));
  api.route('/', createJobsRoutes({ ...deps, visibleSites }));
  api.route('/', createConnectorRoutes(deps));
  api.route('/', createTokensRoutes(deps));
  api.route('/', createUsersRoutes(deps));
  api.route('/', createAuditRoutes(deps));

  api.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'An API token (`sitewarden token create`).',
  });
  api.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: {
      title: 'Sitewarden API',
      version: deps.version,
      description:
        'Manage WordPress sites: connection, plugins, themes, uptime, performance and backups; webhooks for events. Errors are RFC 9457 problem documents (`application/problem+json`) with a stable `type`.',
    },
    servers: [{ url: '/api' }],
    security: [{ bearer: [] }],
  });

  const app = new OpenAPIHono<AppEnv>();
  // First: every limiter and log line that names the client reads this one address (clientAddress(c)).
  app.use('*', clientAddressMiddleware(deps.trustedProxies));
  if (deps.metrics) app.use('*', requestMetrics(deps.metrics));
  // Before any work: past the lag bound a request costs only its refusal (health, readiness, metrics still answer).
  const overload = deps.overload?.boundMs
    ? createOverloadGuard({
        boundMs: deps.overload.boundMs,
        lag: deps.overload.lag,
        alwaysAnswered: [AUTHORIZATION_CALLBACK_PATH],
        onRefused: deps.metrics ? () => deps.metrics!.noteOverloaded() : undefined,
      })
    : undefined;
  if (overload) app.use('*', overload.middleware());
  // Outside /api (and its OpenAPI document): what supervisors and Prometheus call.
  app.route('/', createHealthCheckRoutes({ ...deps, overload }));
  if (deps.metrics && !deps.metricsOnOwnListener) {
    app.route(
      '/',
      createMetricsRoutes({
        metrics: deps.metrics,
        auth: bearerAuth({ tokens: deps.tokens, publicPaths: new Set(), limiter: deps.authLimiter, onLimited }),
      }),
    );
  }
  app.route('/api', api);
  app.route('/', createDashboard(deps));

  answerUnknownRoutes(app);
  app.onError(createErrorHandler(deps.logger));
  return app;
}
