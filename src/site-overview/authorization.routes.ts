import { createRoute, OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../http/auth.js';
import { problemResponses } from '../http/openapi.js';
import { isAppError, type AppError } from '../shared/errors.js';
import type { StatusesOf } from '../uptime/index.js';
import { toSiteView } from './site-view.js';
import { AuthorizationCallbackQuery, AUTHORIZATION_CALLBACK_PATH, type SitesService } from '../sites/index.js';
import { SiteSchema } from './site-overview.schemas.js';

const callback = createRoute({
  method: 'get',
  path: AUTHORIZATION_CALLBACK_PATH.replace(/^\/api/, ''),
  operationId: 'completeSiteAuthorization',
  tags: ['Sites'],
  summary: 'Application-password callback',
  description:
    'WordPress redirects the approving administrator’s browser here with `site_url`, `user_login` and `password` (or `success=false`). Unauthenticated: the one-time `state` ties it to the pending site. Browsers (`Accept: text/html`) are sent on with a 303 to the dashboard’s result page, so the application password does not stay in the address bar; other clients get JSON.',
  security: [],
  request: { query: AuthorizationCallbackQuery },
  responses: {
    200: { description: 'The site is connected', content: { 'application/json': { schema: SiteSchema } } },
    303: {
      description:
        'A browser: on to the result page (`Location`), which says whether the site is connected, without the query',
    },
    ...problemResponses(400, 403, 410, 422, 502, 504),
  },
});

/** Where a browser goes once the callback has read its query: the dashboard's result page for the outcome. */
export type AuthorizationLanding = (outcome: { siteId: string } | { problem: AppError }) => string;

export function createAuthorizationRoutes({
  sites,
  uptime,
  authorizationLanding,
}: {
  sites: SitesService;
  uptime: { statusesOf: StatusesOf };
  authorizationLanding: AuthorizationLanding;
}) {
  return new OpenAPIHono<AppEnv>().openapi(callback, async (c) => {
    const wantsHtml = (c.req.header('accept') ?? '').includes('text/html');
    try {
      const site = await sites.completeAuthorization(c.req.valid('query'));
      if (wantsHtml) return c.redirect(authorizationLanding({ siteId: site.id }), 303) as never;
      const tags = (await sites.tagsOf([site.id])).get(site.id);
      return c.json(toSiteView(site, (await uptime.statusesOf([site.id])).get(site.id) ?? null, tags), 200);
    } catch (error) {
      if (!isAppError(error) || !wantsHtml) throw error;
      // The query holds the application password: a browser never stays on this URL, not even on a failure.
      return c.redirect(authorizationLanding({ problem: error }), 303) as never;
    }
  });
}
