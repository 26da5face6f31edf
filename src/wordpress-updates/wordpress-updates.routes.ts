import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/auth.js';
import { jsonContent, problemResponses } from '../http/openapi.js';
import { SiteIdPathParam } from '../sites/index.js';
import type { WordPressUpdatesService } from './wordpress-updates.service.js';

const tags = ['WordPress updates'];

const CoreUpdateInput = z
  .object({
    version: z
      .string()
      .regex(/^\d{1,4}(\.\d{1,4}){1,3}(-[A-Za-z0-9.]{1,20})?$/, 'version is a WordPress version such as 6.5.5')
      .optional()
      .openapi({
        description: 'One of the versions WordPress offers the site; default the newest offered.',
        example: '6.5.5',
      }),
  })
  .openapi('CoreUpdateInput');

const CoreUpdateSchema = z
  .object({
    previousVersion: z.string().openapi({ example: '6.1.9' }),
    version: z.string().openapi({ description: 'What WordPress’s own files now say.', example: '6.5.5' }),
    databaseUpgraded: z.boolean().openapi({
      description: 'Whether the database is at the version the new files expect (WordPress’s upgrade ran).',
    }),
    rollback: z.object({ available: z.literal(false), reason: z.string() }).openapi({
      description:
        'Always unavailable: a plain core update takes no restore point (a copy of WordPress’s own files is large), so its update history entry cannot be rolled back (409 `no-restore-point`). `POST /api/sites/{siteId}/core/safe-update` takes one, checks the site and rolls back on its own.',
    }),
  })
  .openapi('CoreUpdate');

const TranslationItem = {
  type: z.enum(['core', 'plugin', 'theme']),
  slug: z.string().openapi({ description: 'The plugin’s or theme’s slug; `default` for core.' }),
  language: z.string().openapi({ example: 'de_DE' }),
};
const TranslationsUpdateSchema = z
  .object({
    updated: z.array(z.object({ ...TranslationItem, version: z.string() })),
    failed: z.array(z.object({ ...TranslationItem, message: z.string() })),
  })
  .openapi('TranslationsUpdate');

const routes = {
  updateTranslations: createRoute({
    method: 'post',
    path: '/sites/{siteId}/translations/update',
    operationId: 'updateTranslations',
    tags,
    summary: 'Update translations',
    description:
      'Installs every language pack WordPress offers the site (core, plugins, themes) through the connector with WordPress’s own Language_Pack_Upgrader, after asking the update servers again. Packs that failed are listed in `failed`; 502 `site-operation-failed` when none could be installed, 409 `no-update-available` when none is offered.',
    request: { params: SiteIdPathParam },
    responses: {
      200: jsonContent(TranslationsUpdateSchema, 'The language packs installed, and those that failed'),
      ...problemResponses(400, 403, 404, 409, 422, 502, 504),
    },
  }),
  updateCore: createRoute({
    method: 'post',
    path: '/sites/{siteId}/core/update',
    operationId: 'updateCore',
    tags,
    summary: 'Update WordPress core',
    description:
      'Updates WordPress (minor or major) through the connector with WordPress’s own Core_Upgrader, to `version` or to the newest version WordPress offers the site, then checks that the database upgrade ran. It takes no restore point and cannot be rolled back through Sitewarden (`rollback` in the answer says so; the safe core update can). 409 `no-update-available` when nothing newer is offered, 409 `core-version-not-offered` for a version not offered, 422 `site-refused` when WordPress cannot write its files, 502 `site-operation-failed` with WordPress’s reason.',
    request: {
      params: SiteIdPathParam,
      body: { content: { 'application/json': { schema: CoreUpdateInput } }, required: false },
    },
    responses: {
      200: jsonContent(CoreUpdateSchema, 'WordPress was updated'),
      ...problemResponses(400, 403, 404, 409, 415, 422, 502, 504),
    },
  }),
};

export function createWordPressUpdatesRoutes({ wordpressUpdates }: { wordpressUpdates: WordPressUpdatesService }) {
  return new OpenAPIHono<AppEnv>()
    .openapi(routes.updateCore, async (c) => {
      const input = c.req.valid('json') ?? {};
      return c.json(
        await wordpressUpdates.updateCore(c.req.valid('param').siteId, {
          version: input.version,
          requestedBy: c.get('actor'),
        }),
        200,
      );
    })
    .openapi(routes.updateTranslations, async (c) =>
      c.json(
        await wordpressUpdates.updateTranslations(c.req.valid('param').siteId, { requestedBy: c.get('actor') }),
        200,
      ),
    );
}
