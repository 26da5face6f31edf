import { z } from '@hono/zod-openapi';
import { siteStates } from './sites.table.js';

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
