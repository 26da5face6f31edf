import { createRoute, OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../http/auth.js';
import { jsonContent, problemResponses } from '../http/openapi.js';
import { SiteIdPathParam } from '../sites/index.js';
import { AdminLoginLinkSchema } from './admin-login.schemas.js';
import type { AdminLoginService } from './admin-login.service.js';

const signIn = createRoute({
  method: 'post',
  path: '/sites/{siteId}/admin-login',
  operationId: 'createAdminLoginLink',
  tags: ['Sites'],
  summary: 'A one-click sign-in link to the site’s wp-admin',
  description:
    'The site’s connector (1.6.0+) mints a link that signs in to wp-admin as the WordPress user Sitewarden acts as: usable once, within a minute. Each link given out is logged as the event `site.admin-login`, naming who asked (never the link). 404 `site-not-found`; 409 `site-not-connected`; 409 `admin-login-disabled` when the site’s `adminLogin.enabled` setting is off (no request is made to the site); 422 `connector-missing` or `connector-outdated`; 422 `site-refused` when the WordPress user is not an administrator or the site turned the feature off; 502 `site-invalid-response` when the site answers a link that is not on its own address.',
  request: { params: SiteIdPathParam },
  responses: {
    200: jsonContent(AdminLoginLinkSchema, 'The link and when it expires'),
    ...problemResponses(400, 403, 404, 409, 422, 502, 504),
  },
});

export function createAdminLoginRoutes({ adminLogin }: { adminLogin: AdminLoginService }) {
  return new OpenAPIHono<AppEnv>().openapi(signIn, async (c) => {
    const link = await adminLogin.link(c.req.valid('param').siteId, c.get('actor'));
    // The answer holds a secret: no cache may keep it.
    c.header('Cache-Control', 'no-store');
    return c.json(link, 200);
  });
}
