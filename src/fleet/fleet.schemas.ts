import { z } from '@hono/zod-openapi';
import { PaginationQuery } from '../http/pagination.js';
import { SlugPattern, TagFilter } from '../sites/index.js';

const ItemTypeSchema = z.enum(['plugin', 'theme']);

export const FleetUpdatesQuery = PaginationQuery.extend({
  groupBy: z
    .enum(['item', 'site'])
    .default('item')
    .openapi({ description: '`item`: one entry per plugin/theme and version offered; `site`: one entry per site.' }),
  type: z
    .enum(['plugin', 'theme', 'core', 'translations'])
    .optional()
    .openapi({ description: 'Only plugin, theme, WordPress core or translation (language pack) updates.' }),
  tag: TagFilter,
});

export const FleetInstalledQuery = PaginationQuery.extend({ tag: TagFilter });

export const FleetItemParam = z.object({
  slug: z
    .string()
    .min(1)
    .max(200)
    .regex(SlugPattern, 'a slug is letters, digits, `.`, `_` and `-`')
    .openapi({ param: { name: 'slug', in: 'path' }, example: 'akismet' }),
});

const PendingItemSchema = z
  .object({
    type: ItemTypeSchema,
    slug: z.string(),
    name: z.string(),
    fromVersions: z.array(z.string()).openapi({ description: 'The versions the sites with this update run now.' }),
    toVersion: z.string(),
    sites: z.number().int().openapi({ description: 'How many sites are offered this update.' }),
    siteList: z.string().openapi({ description: 'Which sites: the paginated list of sites that have the item.' }),
  })
  .openapi('FleetPendingItem');

const PendingCoreSchema = z
  .object({
    type: z.literal('core'),
    slug: z.literal('wordpress'),
    name: z.string(),
    fromVersions: z.array(z.string()).openapi({ description: 'The WordPress versions the sites offered it run now.' }),
    toVersion: z.string(),
    sites: z.number().int().openapi({ description: 'How many sites are offered this WordPress version.' }),
    siteList: z.string().openapi({ description: 'Which sites: this list grouped by site, core only.' }),
  })
  .openapi('FleetPendingCore');

const PendingTranslationsSchema = z
  .object({
    type: z.literal('translations'),
    name: z.string(),
    sites: z.number().int().openapi({ description: 'How many sites are offered language pack updates.' }),
    packs: z.number().int().openapi({ description: 'How many language packs in all (of core, plugins and themes).' }),
    siteList: z.string().openapi({ description: 'Which sites: this list grouped by site, translations only.' }),
  })
  .openapi('FleetPendingTranslations');

/** One entry of the list grouped by item. */
export type PendingUpdateItem =
  z.infer<typeof PendingItemSchema> | z.infer<typeof PendingCoreSchema> | z.infer<typeof PendingTranslationsSchema>;

const PendingSiteSchema = z
  .object({
    siteId: z.string(),
    url: z.string(),
    updates: z.array(
      z.union([
        z.object({
          type: z.enum(['plugin', 'theme', 'core']),
          slug: z.string().openapi({ description: 'Core: `wordpress`.' }),
          name: z.string(),
          version: z.string(),
          toVersion: z.string(),
        }),
        z.object({
          type: z.literal('translations'),
          name: z.string(),
          packs: z.number().int().openapi({ description: 'How many language packs the site is offered.' }),
        }),
      ]),
    ),
  })
  .openapi('FleetPendingSite');

export const FleetUpdatesPage = z
  .object({
    groupBy: z.enum(['item', 'site']),
    items: z.array(z.union([PendingItemSchema, PendingCoreSchema, PendingTranslationsSchema, PendingSiteSchema])),
    nextCursor: z.string().nullable(),
  })
  .openapi('FleetUpdatesPage');

export const InstalledItemSchema = z
  .object({
    type: ItemTypeSchema,
    slug: z.string(),
    name: z.string(),
    sites: z.number().int(),
    active: z.number().int().openapi({ description: 'On how many of them it is active.' }),
    withUpdate: z.number().int().openapi({ description: 'How many of them are offered an update.' }),
    versions: z.array(z.string()),
    siteList: z.string(),
  })
  .openapi('FleetInstalledItem');

export const ItemSiteSchema = z
  .object({
    siteId: z.string(),
    url: z.string(),
    version: z.string(),
    active: z.boolean(),
    update: z.object({ version: z.string() }).nullable(),
  })
  .openapi('FleetItemSite');
