import { z } from '@hono/zod-openapi';
import { PluginSchema, ThemeSchema } from '../inventory/index.js';
import { siteStates } from '../sites/index.js';
import { SiteUptimeStatusSchema } from '../uptime/index.js';

/** A site as the API shows it: the sites feature's record, composed with its uptime status and inventory. */
export const SiteSchema = z
  .object({
    id: z.string(),
    url: z.string().openapi({ description: 'The site’s home URL as WordPress reports it.' }),
    name: z.string().nullable(),
    tags: z.array(z.string()).openapi({ description: 'The site’s tags, sorted (`PUT /sites/{id}/tags`).' }),
    restUrl: z.string().openapi({ description: 'The REST API root the site advertises.' }),
    username: z.string().nullable().openapi({ description: 'The WordPress user Sitewarden acts as.' }),
    status: z.object({
      connection: z.enum(siteStates).openapi({
        description:
          '`pending` until the admin approves in wp-admin; `connected`; or why the connection did not happen.',
      }),
      reason: z.string().nullable().openapi({ description: 'Why the site is in a non-connected state.' }),
      lastSyncedAt: z
        .string()
        .nullable()
        .openapi({ description: 'When plugins and themes were last read from the site.' }),
      lastSyncAttemptAt: z.string().nullable(),
      syncError: z
        .string()
        .nullable()
        .openapi({ description: 'Why the last sync failed; null after a successful sync.' }),
      uptime: SiteUptimeStatusSchema.openapi({
        description:
          'The uptime monitor’s view (details: `GET /sites/{siteId}/uptime`); null while the site is not connected.',
      }),
    }),
    versions: z.object({
      wordpress: z.string().nullable(),
      php: z.string().nullable(),
      connector: z
        .string()
        .nullable()
        .openapi({ description: 'The Sitewarden connector plugin’s version, null when it is not installed.' }),
    }),
    authorization: z
      .object({ url: z.string(), expiresAt: z.string() })
      .nullable()
      .openapi({ description: 'While pending: where the site’s admin approves the connection.' }),
    createdAt: z.string(),
    connectedAt: z.string().nullable(),
  })
  .openapi('Site');

/** A site's detail carries at most this many plugins and this many themes; the paginated lists have them all. */
export const SITE_DETAIL_MAX_ITEMS = 100;

const InventoryCount = (kind: 'plugins' | 'themes') =>
  z.object({
    total: z
      .number()
      .int()
      .openapi({ description: `How many ${kind} the site had at \`status.lastSyncedAt\`.` }),
    list: z.string().openapi({
      description: `The paginated list of all of them (\`GET /api/sites/{siteId}/${kind}\`, read from the site now).`,
    }),
  });

export const SiteDetailsSchema = SiteSchema.extend({
  plugins: z
    .array(PluginSchema)
    .max(SITE_DETAIL_MAX_ITEMS)
    .openapi({
      description: `As of \`status.lastSyncedAt\`, sorted by slug: the first ${SITE_DETAIL_MAX_ITEMS} (\`inventory.plugins.total\` says how many there are).`,
    }),
  themes: z
    .array(ThemeSchema)
    .max(SITE_DETAIL_MAX_ITEMS)
    .openapi({
      description: `As of \`status.lastSyncedAt\`, sorted by slug: the first ${SITE_DETAIL_MAX_ITEMS} (\`inventory.themes.total\` says how many there are).`,
    }),
  inventory: z
    .object({ plugins: InventoryCount('plugins'), themes: InventoryCount('themes') })
    .openapi({ description: 'Counts as of the last sync, and where the full lists are.' }),
}).openapi('SiteDetails');

export const PendingSiteSchema = SiteSchema.extend({
  authorizeUrl: z.string().openapi({
    description: 'Open this in a browser logged in to the site as an administrator and approve the connection.',
  }),
}).openapi('PendingSite');

export type SiteView = z.infer<typeof SiteSchema>;
export type SiteDetailsView = z.infer<typeof SiteDetailsSchema>;
