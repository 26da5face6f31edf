import { z } from '@hono/zod-openapi';
import { PluginSchema } from '../plugins/plugins.schemas.js';
import { ThemeSchema } from '../themes/themes.schemas.js';
import { siteStates } from './sites.table.js';
import { SiteUptimeStatusSchema } from '../uptime/uptime.schemas.js';

export const SiteIdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'id', in: 'path' }, example: 'site_01jc0z6x8m3yq4x0h7a9b2c3d4' }),
});

export const ConnectSiteInput = z
  .object({
    url: z
      .string({ error: 'url is required' })
      .min(1, 'url is required')
      .max(2048)
      .openapi({ description: 'The site’s address, e.g. `https://example.com`.', example: 'https://example.com' }),
    username: z.string().min(1).max(200).optional().openapi({
      description: 'A WordPress user with administrator capabilities. With `applicationPassword`, connects at once.',
    }),
    applicationPassword: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .openapi({ description: 'An application password of that user (spaces allowed, as WordPress shows it).' }),
  })
  .openapi('ConnectSiteInput');

export const SiteSchema = z
  .object({
    id: z.string(),
    url: z.string().openapi({ description: 'The site’s home URL as WordPress reports it.' }),
    name: z.string().nullable(),
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

export const ListSitesQuery = z.object({
  state: z.enum(siteStates).optional().openapi({ description: 'Only sites in this connection state.' }),
});

export const AuthorizationCallbackQuery = z.object({
  state: z
    .string()
    .min(1)
    .max(200)
    .openapi({ description: 'The one-time value tying the approval to the pending site.' }),
  success: z.string().optional().openapi({ description: '`false` when the admin rejected the request.' }),
  site_url: z.string().max(2048).optional(),
  user_login: z.string().max(200).optional(),
  password: z.string().max(200).optional(),
});

export type SiteView = z.infer<typeof SiteSchema>;
export type SiteDetailsView = z.infer<typeof SiteDetailsSchema>;

/** Nested routes name the site `{siteId}`. */
export const SiteIdPathParam = z.object({
  siteId: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'siteId', in: 'path' }, example: 'site_01jc0z6x8m3yq4x0h7a9b2c3d4' }),
});

/** Plugin and theme slugs: folder names. */
export const SlugPattern = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
