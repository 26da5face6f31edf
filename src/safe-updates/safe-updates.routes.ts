import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/auth.js';
import { jsonContent, problemResponses } from '../http/openapi.js';
import { SiteIdPathParam } from '../sites/index.js';
import {
  ItemParams,
  SafeUpdateParams,
  SafeUpdatePolicySchema,
  SafeUpdateSchema,
  ScreenshotParams,
} from './safe-updates.schemas.js';
import type { SafeUpdatesService } from './safe-updates.service.js';
import type { Actor } from '../shared/actor.js';

const tags = ['Safe updates'];

const SafeUpdateInput = z
  .object({
    version: z
      .string()
      .regex(/^[0-9A-Za-z.+-]{1,40}$/)
      .optional()
      .openapi({
        description: 'The version expected on offer; another one on offer answers `failed` / `version-not-offered`.',
      }),
    policy: SafeUpdatePolicySchema.partial().optional(),
  })
  .openapi('SafeUpdateInput');

const start = (type: 'plugin' | 'theme') =>
  createRoute({
    method: 'post',
    path: `/sites/{siteId}/${type}s/{slug}/safe-update`,
    operationId: `safeUpdate${type === 'plugin' ? 'Plugin' : 'Theme'}`,
    tags,
    summary: `Update a ${type} safely: check, restore point, update, check, roll back if broken`,
    description: `Answers 202 with the queued safe update (a job of kind \`safe-update\`; poll \`GET /sites/{siteId}/safe-updates/{id}\`). An unhealthy site is not updated. After the update, a site that fails its checks (status, PHP fatal markers, keyword, REST, connector) gets the previous version back through the connector’s standalone rollback path, which works even when every WordPress request ends in a fatal error. See docs/safe-updates.md.`,
    request: {
      params: ItemParams,
      body: { required: false, content: { 'application/json': { schema: SafeUpdateInput } } },
    },
    responses: { 202: jsonContent(SafeUpdateSchema, 'Queued'), ...problemResponses(400, 403, 404, 422) },
  });

const routes = {
  plugin: start('plugin'),
  theme: start('theme'),
  core: createRoute({
    method: 'post',
    path: '/sites/{siteId}/core/safe-update',
    operationId: 'safeUpdateCore',
    tags,
    summary: 'Update WordPress itself safely, through the same path',
    description:
      'As for a plugin: the restore point holds wp-admin, wp-includes and the PHP files of the WordPress directory (wp-config.php aside); `version` is one WordPress offers (empty: the newest).',
    request: {
      params: SiteIdPathParam,
      body: { required: false, content: { 'application/json': { schema: SafeUpdateInput } } },
    },
    responses: { 202: jsonContent(SafeUpdateSchema, 'Queued'), ...problemResponses(400, 403, 404, 422) },
  }),
  list: createRoute({
    method: 'get',
    path: '/sites/{siteId}/safe-updates',
    operationId: 'listSafeUpdates',
    tags,
    summary: 'A site’s safe updates, newest first (the last 50)',
    request: { params: SiteIdPathParam },
    responses: {
      200: jsonContent(z.object({ items: z.array(SafeUpdateSchema) }), 'Safe updates'),
      ...problemResponses(404),
    },
  }),
  get: createRoute({
    method: 'get',
    path: '/sites/{siteId}/safe-updates/{safeUpdateId}',
    operationId: 'getSafeUpdate',
    tags,
    summary: 'One safe update’s report',
    description:
      'Checks before and after (each with its statuses and timings), the steps (restore point, update, rollback) and the decision.',
    request: { params: SafeUpdateParams },
    responses: { 200: jsonContent(SafeUpdateSchema, 'The report'), ...problemResponses(404) },
  }),
  screenshot: createRoute({
    method: 'get',
    path: '/sites/{siteId}/safe-updates/{safeUpdateId}/screenshots/{name}',
    operationId: 'getSafeUpdateScreenshot',
    tags,
    summary: 'A screenshot or diff of a safe update, as PNG',
    description:
      'The names are in the report’s `screenshots`: `before-N.png`, `after-N.png` and `diff-N.png` for its N-th checked page (0 is the home page).',
    request: { params: ScreenshotParams },
    responses: {
      200: {
        description: 'The PNG',
        content: { 'image/png': { schema: z.string().openapi({ format: 'binary' }) } },
      },
      ...problemResponses(400, 404),
    },
  }),
  secret: createRoute({
    method: 'post',
    path: '/sites/{siteId}/rollback-secret',
    operationId: 'provisionRollbackSecret',
    tags,
    summary: 'Give the site a new standalone rollback secret',
    description:
      'For sites connected before safe updates (a safe update also does this on its own when the site has none), or to rotate it. The site keeps only its SHA-256; the daemon keeps it encrypted. Then checks that the standalone rollback path accepts it.',
    request: { params: SiteIdPathParam },
    responses: {
      200: jsonContent(z.object({ provisionedAt: z.string() }), 'Provisioned and checked'),
      ...problemResponses(403, 404, 422, 502, 504),
    },
  }),
};

export function createSafeUpdatesRoutes({ safeUpdates }: { safeUpdates: SafeUpdatesService }) {
  const handler =
    (type: 'plugin' | 'theme') =>
    (c: { req: { valid: (target: 'param' | 'json') => unknown }; get: (key: 'actor') => Actor }) => {
      const { siteId, slug } = c.req.valid('param') as z.infer<typeof ItemParams>;
      const input = (c.req.valid('json') ?? {}) as z.infer<typeof SafeUpdateInput>;
      return safeUpdates.start({
        siteId,
        type,
        slug,
        version: input.version,
        policy: input.policy,
        requestedBy: c.get('actor'),
      });
    };
  return new OpenAPIHono<AppEnv>()
    .openapi(routes.plugin, async (c) => c.json(await handler('plugin')(c), 202))
    .openapi(routes.theme, async (c) => c.json(await handler('theme')(c), 202))
    .openapi(routes.core, async (c) => {
      const input = (c.req.valid('json') ?? {}) as z.infer<typeof SafeUpdateInput>;
      const { siteId } = c.req.valid('param');
      return c.json(
        await safeUpdates.start({
          siteId,
          type: 'core',
          slug: 'wordpress',
          version: input.version,
          policy: input.policy,
          requestedBy: c.get('actor'),
        }),
        202,
      );
    })
    .openapi(routes.list, async (c) => c.json({ items: await safeUpdates.list(c.req.valid('param').siteId) }, 200))
    .openapi(routes.get, async (c) => {
      const { siteId, safeUpdateId } = c.req.valid('param');
      return c.json(await safeUpdates.get(siteId, safeUpdateId), 200);
    })
    .openapi(routes.screenshot, async (c) => {
      const { siteId, safeUpdateId, name } = c.req.valid('param');
      const png = await safeUpdates.screenshot(siteId, safeUpdateId, name);
      c.header('content-type', 'image/png');
      c.header('cache-control', 'private, max-age=86400, immutable');
      return c.body(new Uint8Array(png), 200);
    })
    .openapi(routes.secret, async (c) =>
      c.json(await safeUpdates.provisionRollbackSecret(c.req.valid('param').siteId), 200),
    );
}
