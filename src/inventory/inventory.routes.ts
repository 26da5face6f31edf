import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/auth.js';
import { jsonContent, problemResponses } from '../http/openapi.js';
import { compareVersions } from '../wordpress/connector-client.js';
import { sitesProblems, SiteIdPathParam, type SitesRepository } from '../sites/index.js';
import type { InventoryRepository } from './inventory.repository.js';

const Offer = z.object({
  version: z.string(),
  firstSeenAt: z
    .string()
    .datetime()
    .openapi({ description: 'When Sitewarden first saw this version offered to the site.' }),
});

const SiteInventorySchema = z
  .object({
    siteId: z.string(),
    syncedAt: z.string().datetime().nullable(),
    wordpress: z.object({
      version: z.string().nullable(),
      offers: z.array(Offer.extend({ kind: z.enum(['minor', 'major']) })).openapi({
        description: 'Newer releases WordPress offers the site, newest first: `minor` on its branch, `major` beyond.',
      }),
    }),
    php: z.string().nullable(),
    database: z
      .object({ type: z.enum(['mysql', 'mariadb']), version: z.string() })
      .nullable()
      .openapi({ description: 'Null when the connector (before 1.4.0) does not say.' }),
    timeZone: z.string().nullable().openapi({
      description: 'WordPress’s time zone: an IANA name, or `UTC±HH:MM` from its UTC offset; null when unknown.',
    }),
    updates: z
      .array(Offer.extend({ type: z.enum(['plugin', 'theme']), slug: z.string() }))
      .openapi({ description: 'Plugin and theme updates offered, with their first sighting.' }),
    translations: z
      .array(Offer.extend({ type: z.enum(['core', 'plugin', 'theme']), slug: z.string(), language: z.string() }))
      .openapi({ description: 'Language packs pending.' }),
  })
  .openapi('SiteInventory');

const route = createRoute({
  method: 'get',
  path: '/sites/{siteId}/inventory',
  operationId: 'getSiteInventory',
  tags: ['Sites'],
  summary: 'What a site runs on and is offered',
  description:
    'From the last sync (never from the site): WordPress and the releases it offers, PHP, the database server, the time zone, and every plugin, theme and translation update offered, with when it was first seen (update policies’ release delays count from it). Plugins’ requirements and dependents are in the site’s plugin list.',
  request: { params: SiteIdPathParam },
  responses: { 200: jsonContent(SiteInventorySchema, 'The inventory'), ...problemResponses(404) },
});

const branch = (version: string) => version.split('.').slice(0, 2).join('.');

/** GET /api/sites/{siteId}/inventory. */
export function createInventoryRoutes({
  inventories,
  sitesRepository,
}: {
  inventories: Pick<InventoryRepository, 'details' | 'read'>;
  sitesRepository: Pick<SitesRepository, 'findById'>;
}) {
  return new OpenAPIHono<AppEnv>().openapi(route, async (c) => {
    const { siteId } = c.req.valid('param');
    const site = await sitesRepository.findById(siteId);
    if (!site) throw sitesProblems.notFound.create(`no site has the id ${siteId}`);
    const { environment, offers } = await inventories.details(siteId);
    const inventory = await inventories.read(siteId);
    const seen = (offer: { version: string; firstSeenAt: Date }) => ({
      version: offer.version,
      firstSeenAt: offer.firstSeenAt.toISOString(),
    });
    const version = site.wordpressVersion;
    return c.json(
      {
        siteId,
        syncedAt: inventory?.syncedAt.toISOString() ?? null,
        wordpress: {
          version,
          offers: offers
            .filter((offer) => offer.type === 'core')
            .sort((a, b) => compareVersions(b.version, a.version))
            .map((offer) => ({
              ...seen(offer),
              kind: version && branch(version) === branch(offer.version) ? ('minor' as const) : ('major' as const),
            })),
        },
        php: site.phpVersion,
        database:
          environment?.databaseType && environment.databaseVersion
            ? { type: environment.databaseType, version: environment.databaseVersion }
            : null,
        timeZone: environment?.timeZone ?? null,
        updates: offers.flatMap((offer) =>
          offer.type === 'plugin' || offer.type === 'theme'
            ? [{ type: offer.type, slug: offer.slug, ...seen(offer) }]
            : [],
        ),
        translations: offers.flatMap((offer) => {
          if (offer.type !== 'translation') return [];
          const [type, slug, language] = offer.slug.split('/') as ['core' | 'plugin' | 'theme', string, string];
          return [{ type, slug, language, ...seen(offer) }];
        }),
      },
      200,
    );
  });
}
