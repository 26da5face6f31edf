import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { AppEnv } from '../http/auth.js';
import { problemResponses } from '../http/openapi.js';
import { problemDocument } from '../http/problem.js';
import { isAppError, type AppError } from '../shared/errors.js';
import type { SiteUptimeStatus } from '../uptime/index.js';
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
    'WordPress redirects the approving administrator’s browser here with `site_url`, `user_login` and `password` (or `success=false`). Unauthenticated: the one-time `state` ties it to the pending site. Browsers get a short HTML page; other clients JSON.',
  security: [],
  request: { query: AuthorizationCallbackQuery },
  responses: {
    200: {
      description: 'The site is connected',
      content: { 'application/json': { schema: SiteSchema }, 'text/html': { schema: z.string() } },
    },
    ...problemResponses(400, 403, 410, 422, 502, 504),
  },
});

export function createAuthorizationRoutes({
  sites,
  uptime,
}: {
  sites: SitesService;
  uptime: { statusOf(siteId: string): SiteUptimeStatus };
}) {
  return new OpenAPIHono<AppEnv>().openapi(callback, async (c) => {
    const wantsHtml = (c.req.header('accept') ?? '').includes('text/html');
    try {
      const site = await sites.completeAuthorization(c.req.valid('query'));
      if (wantsHtml)
        return c.html(
          page('Site connected', `${site.url} is now connected to Sitewarden. You can close this tab.`),
          200,
        );
      return c.json(toSiteView(site, uptime.statusOf(site.id), sites.tagsOf([site.id]).get(site.id)), 200);
    } catch (error) {
      if (!isAppError(error) || !wantsHtml) throw error;
      return htmlProblem(c, error);
    }
  });
}

function htmlProblem(c: Context, error: AppError) {
  const problem = problemDocument(error);
  return c.html(page(problem.title, problem.detail), problem.status as ContentfulStatusCode) as never;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

function page(title: string, message: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} · Sitewarden</title></head><body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></body></html>`;
}
