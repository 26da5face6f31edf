import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/auth.js';
import { bodyOrQueryRequest, readBodyOrQuery } from '../http/input.js';
import { jsonContent, problemResponses } from '../http/openapi.js';
import { pageOfList, pageSchema, PaginationQuery } from '../http/pagination.js';
import { SiteIdPathParam, SlugPattern } from '../sites/index.js';
import { PluginSchema } from '../inventory/index.js';
import type { PluginsService } from './plugins.service.js';

const tags = ['Plugins'];
const PluginParams = SiteIdPathParam.extend({
  slug: z
    .string()
    .regex(SlugPattern, 'a plugin slug has only letters, digits, dots, dashes and underscores')
    .max(200)
    .openapi({ param: { name: 'slug', in: 'path' }, example: 'akismet' }),
});
const InstallInput = z
  .object({
    slug: z
      .string({ error: 'slug is required' })
      .regex(SlugPattern, 'a plugin slug has only letters, digits, dots, dashes and underscores')
      .max(200)
      .openapi({ description: 'The plugin’s slug in the public plugin directory.', example: 'akismet' }),
    activate: z
      .union([z.boolean(), z.enum(['true', 'false', '1', '0']).transform((value) => value === 'true' || value === '1')])
      .optional()
      .openapi({ description: 'Activate it once installed (default false).' }),
  })
  .openapi('InstallPluginInput');

const ForceQuery = z.object({
  force: z
    .enum(['true', 'false', '1', '0'])
    .transform((value) => value === 'true' || value === '1')
    .optional()
    .openapi({
      description:
        'Go ahead even when active plugins require this one (WordPress 6.5+ `Requires Plugins`); without it that answers 409 `plugin-required-by`.',
    }),
});

const siteProblems = [403, 404, 409, 422, 502, 504] as const;
const single = (description: string) => jsonContent(PluginSchema, description);
const action = (verb: 'update' | 'activate', summary: string, description: string) =>
  createRoute({
    method: 'post',
    path: `/sites/{siteId}/plugins/{slug}/${verb}`,
    operationId: `${verb}Plugin`,
    tags,
    summary,
    description,
    request: { params: PluginParams },
    responses: { 200: single('The plugin as WordPress now reports it'), ...problemResponses(400, ...siteProblems) },
  });

const routes = {
  list: createRoute({
    method: 'get',
    path: '/sites/{siteId}/plugins',
    operationId: 'listPlugins',
    tags,
    summary: 'List plugins',
    description:
      'Every plugin installed on the site, read from the site now, sorted by slug; `update` is filled in when the connector is installed.',
    request: { params: SiteIdPathParam, query: PaginationQuery },
    responses: {
      200: jsonContent(pageSchema(PluginSchema, 'PluginPage'), 'A page of plugins'),
      ...problemResponses(400, 404, 409, 422, 502, 504),
    },
  }),
  install: createRoute({
    method: 'post',
    path: '/sites/{siteId}/plugins/install',
    operationId: 'installPlugin',
    tags,
    summary: 'Install a plugin from the plugin directory',
    description:
      '`install` is a fixed segment, never a slug. `slug` may be sent as JSON, as a form, or in the query string. The answer includes the update the site knows of right after installing. With `activate`, a plugin whose required plugins are missing or inactive stays installed but inactive (409 `plugin-dependencies-unmet`, `installed: true`).',
    request: { params: SiteIdPathParam, ...bodyOrQueryRequest(InstallInput) },
    responses: { 201: single('Installed'), ...problemResponses(400, 415, ...siteProblems) },
  }),
  update: action(
    'update',
    'Update a plugin',
    'Updates the plugin to the newest version the site knows of, through the connector. Its active state is kept. A restore point (a copy of its folder) is taken first. When the new version is on the site’s disk but WordPress then fails (or the update’s own request fails after the files changed, as read by the standalone rollback path of connector 1.7.0+): 502 `update-applied-site-unhealthy` with `fromVersion`, `version` (on disk), `siteProblem` and `updateId`; the history entry `updateId` is `succeeded` with that `reason`, the stored inventory shows the version on disk, and `POST /api/sites/{siteId}/updates/history/{updateId}/rollback` puts the restore point back.',
  ),
  activate: action(
    'activate',
    'Activate a plugin',
    'Activating an active plugin changes nothing and answers 200. A plugin whose required plugins (WordPress 6.5+ `Requires Plugins`) are missing or inactive is refused with 409 `plugin-dependencies-unmet`, whose `missing` lists their slugs.',
  ),
  deactivate: createRoute({
    method: 'post',
    path: '/sites/{siteId}/plugins/{slug}/deactivate',
    operationId: 'deactivatePlugin',
    tags,
    summary: 'Deactivate a plugin',
    description:
      'Deactivating an inactive plugin changes nothing and answers 200. A plugin that active plugins require is refused with 409 `plugin-required-by` (`requiredBy` lists their slugs) unless `force=true`.',
    request: { params: PluginParams, query: ForceQuery },
    responses: { 200: single('The plugin as WordPress now reports it'), ...problemResponses(400, ...siteProblems) },
  }),
  remove: createRoute({
    method: 'delete',
    path: '/sites/{siteId}/plugins/{slug}',
    operationId: 'deletePlugin',
    tags,
    summary: 'Delete a plugin',
    description:
      'Deletes an inactive plugin’s files from the site. An active plugin must be deactivated first (409 `plugin-active`); one that active plugins require is refused with 409 `plugin-required-by` unless `force=true`.',
    request: { params: PluginParams, query: ForceQuery },
    responses: { 204: { description: 'Deleted' }, ...problemResponses(400, ...siteProblems) },
  }),
};

export function createPluginsRoutes({ plugins }: { plugins: PluginsService }) {
  return new OpenAPIHono<AppEnv>()
    .openapi(routes.list, async (c) => {
      const all = await plugins.list(c.req.valid('param').siteId);
      return c.json(
        pageOfList(all, c.req.valid('query'), (plugin) => plugin.slug, SlugPattern),
        200,
      );
    })
    .openapi(routes.install, async (c) => {
      const { slug, activate } = readBodyOrQuery(c, InstallInput);
      return c.json(await plugins.install(c.req.valid('param').siteId, slug, { activate }), 201);
    })
    .openapi(routes.update, async (c) =>
      c.json(
        await plugins.update(c.req.valid('param').siteId, c.req.valid('param').slug, { requestedBy: c.get('actor') }),
        200,
      ),
    )
    .openapi(routes.activate, async (c) =>
      c.json(await plugins.activate(c.req.valid('param').siteId, c.req.valid('param').slug), 200),
    )
    .openapi(routes.deactivate, async (c) => {
      const { siteId, slug } = c.req.valid('param');
      return c.json(await plugins.deactivate(siteId, slug, { force: c.req.valid('query').force }), 200);
    })
    .openapi(routes.remove, async (c) => {
      const { siteId, slug } = c.req.valid('param');
      await plugins.remove(siteId, slug, { force: c.req.valid('query').force });
      return c.body(null, 204);
    });
}
