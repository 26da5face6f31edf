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
    rollback: z
      .union([
        z.object({
          available: z.literal(true),
          updateId: z.string().openapi({
            description:
              'The update history entry: `POST /api/sites/{siteId}/updates/history/{updateId}/rollback` puts the restore point back.',
          }),
          restorePoint: z.object({ id: z.string(), target: z.string().openapi({ example: 'core' }) }).openapi({
            description: 'The copy of `wp-admin`, `wp-includes` and the root PHP files taken before the update.',
          }),
        }),
        z.object({
          available: z.literal(false),
          reason: z.string().openapi({ description: 'Why no restore point was taken (the update went on without).' }),
        }),
      ])
      .openapi({
        description:
          'Whether the update can be rolled back through Sitewarden. A plain core update first takes the restore point a safe core update takes (a copy of `wp-admin`, `wp-includes` and the root PHP files, tens of megabytes on the site’s disk); its history entry `updateId` rolls it back through the site’s standalone rollback path, which works when WordPress fatals. When none could be taken (a connector older than safe updates, a rollback path that cannot be used, a site that cannot copy the files): `available: false` and why; the update went on all the same.',
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
      'Updates WordPress (minor or major) through the connector with WordPress’s own Core_Upgrader, to `version` or to the newest version WordPress offers the site, then checks that the database upgrade ran. It checks nothing else, but first takes the restore point a safe core update takes (`rollback` in the answer: the history entry whose `POST /api/sites/{siteId}/updates/history/{updateId}/rollback` puts the previous core back, or why none could be taken). 409 `no-update-available` when nothing newer is offered, 409 `core-version-not-offered` for a version not offered, 422 `site-refused` when WordPress cannot write its files, 502 `site-operation-failed` with WordPress’s reason.',
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
