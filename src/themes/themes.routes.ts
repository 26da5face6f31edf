import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/auth.js';
import { bodyOrQueryRequest, readBodyOrQuery } from '../http/input.js';
import { jsonContent, problemResponses } from '../http/openapi.js';
import { pageOfList, pageSchema, PaginationQuery } from '../http/pagination.js';
import { SiteIdPathParam, SlugPattern } from '../sites/index.js';
import { ThemeSchema } from '../inventory/index.js';
import type { ThemesService } from './themes.service.js';

const tags = ['Themes'];
const ThemeParams = SiteIdPathParam.extend({
  slug: z
    .string()
    .regex(SlugPattern, 'a theme slug has only letters, digits, dots, dashes and underscores')
    .max(200)
    .openapi({ param: { name: 'slug', in: 'path' }, example: 'twentytwentythree' }),
});
const InstallInput = z
  .object({
    slug: z
      .string({ error: 'slug is required' })
      .regex(/^[a-z0-9][a-z0-9._-]*$/, 'a theme slug has only lowercase letters, digits, dots, dashes and underscores')
      .max(200)
      .refine((slug) => !slug.includes('..'), 'a theme slug has no ..')
      .openapi({ description: 'The theme’s slug in the public theme directory.', example: 'twentytwentyfour' }),
    activate: z
      .union([z.boolean(), z.enum(['true', 'false', '1', '0']).transform((value) => value === 'true' || value === '1')])
      .optional()
      .openapi({ description: 'Switch the site to it once installed (default false).' }),
  })
  .openapi('InstallThemeInput');
const siteProblems = [400, 403, 404, 409, 422, 502, 504] as const;
const action = (verb: 'update' | 'activate', summary: string, description: string) =>
  createRoute({
    method: 'post',
    path: `/sites/{siteId}/themes/{slug}/${verb}`,
    operationId: `${verb}Theme`,
    tags,
    summary,
    description,
    request: { params: ThemeParams },
    responses: {
      200: jsonContent(ThemeSchema, 'The theme as WordPress now reports it'),
      ...problemResponses(...siteProblems),
    },
  });

const routes = {
  list: createRoute({
    method: 'get',
    path: '/sites/{siteId}/themes',
    operationId: 'listThemes',
    tags,
    summary: 'List themes',
    description:
      'Every theme installed on the site, read from the site now, sorted by slug. There is no theme deactivate or create: those routes do not exist.',
    request: { params: SiteIdPathParam, query: PaginationQuery },
    responses: {
      200: jsonContent(pageSchema(ThemeSchema, 'ThemePage'), 'A page of themes'),
      ...problemResponses(400, 404, 409, 422, 502, 504),
    },
  }),
  install: createRoute({
    method: 'post',
    path: '/sites/{siteId}/themes/install',
    operationId: 'installTheme',
    tags,
    summary: 'Install a theme from the theme directory',
    description:
      '`install` is a fixed segment, never a slug. `slug` may be sent as JSON, as a form, or in the query string. Through the connector (1.8.0+: WordPress’s REST API installs plugins only; an older connector answers 422 `connector-outdated` naming the version needed and where to download the current one), which also installs a missing parent theme. 201 with the theme, and the update the site knows of right after installing. 409 `theme-already-installed` when the site has a theme (or folder) of that name; 422 `theme-not-in-directory` for a slug the directory does not know; 422 `site-refused` when the WordPress user may not install themes (or switch them, with `activate`) or the site cannot write its files. With `activate`, a theme WordPress refuses to switch to stays installed (409 `theme-broken`, `installed: true`). Logged as `theme.installed`, naming who asked.',
    request: { params: SiteIdPathParam, ...bodyOrQueryRequest(InstallInput) },
    responses: {
      201: jsonContent(ThemeSchema, 'Installed'),
      ...problemResponses(400, 403, 404, 409, 415, 422, 502, 504),
    },
  }),
  update: action(
    'update',
    'Update a theme',
    'Updates the theme to the newest version the site knows of, through the connector. A restore point (a copy of its folder) is taken first. When the new version is on the site’s disk but WordPress then fails (or the update’s own request fails after the files changed, as read by the standalone rollback path of connector 1.7.0+): 502 `update-applied-site-unhealthy` with `fromVersion`, `version` (on disk), `siteProblem` and `updateId`; the history entry `updateId` is `succeeded` with that `reason`, the stored inventory shows the version on disk, and `POST /api/sites/{siteId}/updates/history/{updateId}/rollback` puts the restore point back.',
  ),
  activate: action(
    'activate',
    'Activate a theme',
    'Switches the site to this theme, through the connector. Activating the active theme changes nothing.',
  ),
  remove: createRoute({
    method: 'delete',
    path: '/sites/{siteId}/themes/{slug}',
    operationId: 'deleteTheme',
    tags,
    summary: 'Delete a theme',
    description:
      'Deletes an inactive theme through the connector. The active theme, and the parent of the active theme, cannot be deleted (409 `theme-active`).',
    request: { params: ThemeParams },
    responses: { 204: { description: 'Deleted' }, ...problemResponses(...siteProblems) },
  }),
};

export function createThemesRoutes({ themes }: { themes: ThemesService }) {
  return new OpenAPIHono<AppEnv>()
    .openapi(routes.list, async (c) => {
      const all = await themes.list(c.req.valid('param').siteId);
      return c.json(
        pageOfList(all, c.req.valid('query'), (theme) => theme.slug, SlugPattern),
        200,
      );
    })
    .openapi(routes.install, async (c) => {
      const { slug, activate } = readBodyOrQuery(c, InstallInput);
      return c.json(
        await themes.install(c.req.valid('param').siteId, slug, { activate, requestedBy: c.get('actor') }),
        201,
      );
    })
    .openapi(routes.update, async (c) =>
      c.json(
        await themes.update(c.req.valid('param').siteId, c.req.valid('param').slug, { requestedBy: c.get('actor') }),
        200,
      ),
    )
    .openapi(routes.activate, async (c) =>
      c.json(await themes.activate(c.req.valid('param').siteId, c.req.valid('param').slug), 200),
    )
    .openapi(routes.remove, async (c) => {
      await themes.remove(c.req.valid('param').siteId, c.req.valid('param').slug);
      return c.body(null, 204);
    });
}
