import { z } from '@hono/zod-openapi';
import { siteStates } from './sites.table.js';

export const SiteIdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'id', in: 'path' }, example: 'site_01jc0z6x8m3yq4x0h7a9b2c3d4' }),
});

const MAX_TAGS_PER_SITE = 32;

/** Lowercase so `Client:Acme` and `client:acme` are one tag; the characters keep tags safe in URLs and filters. */
export const TagName = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z0-9][a-z0-9:._-]{0,63}$/, 'a tag is 1–64 of a–z, 0–9 and `:._-`, starting with a letter or digit')
  .openapi({ example: 'client:acme' });

const TagList = z
  .array(TagName)
  .max(MAX_TAGS_PER_SITE, `a site has at most ${MAX_TAGS_PER_SITE} tags`)
  .transform((tags) => [...new Set(tags)].sort())
  .openapi({
    description: `Up to ${MAX_TAGS_PER_SITE} tags such as \`client:acme\` or \`staging\` (stored lowercase).`,
  });

export const SiteTagsInput = z.object({ tags: TagList }).openapi('SiteTagsInput');

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
    tags: TagList.optional(),
  })
  .openapi('ConnectSiteInput');

/** `tag=a&tag=b`: sites carrying all of them (a query string gives one value as a string, more as an array). */
export const TagFilter = z
  .union([TagName, z.array(TagName).max(MAX_TAGS_PER_SITE)])
  .optional()
  .transform((tag) => (tag === undefined ? [] : Array.isArray(tag) ? tag : [tag]))
  .openapi({ description: 'Only sites carrying this tag; repeat it for sites carrying all of them.' });

/**
 * A version filter matches the version itself and every release under it (`6.5` matches `6.5.5`
 * and `6.5-RC1`); a pre-release such as `6.7-alpha-58716` (what WordPress reports between
 * releases) matches itself.
 */
const VersionFilter = z
  .string()
  .regex(
    /^\d+(\.\d+){0,3}(-[0-9A-Za-z][0-9A-Za-z.-]{0,39})?$/,
    'expected a version such as 6.5, 6.5.5 or 6.7-alpha-58716',
  )
  .optional();

export const ListSitesQuery = z.object({
  state: z.enum(siteStates).optional().openapi({ description: 'Only sites in this connection state.' }),
  tag: TagFilter,
  q: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .optional()
    .openapi({ description: 'Only sites whose URL or name contains this text (case-insensitive).' }),
  wordpressVersion: VersionFilter.openapi({ description: 'Only sites on this WordPress version or under it.' }),
  phpVersion: VersionFilter.openapi({ description: 'Only sites on this PHP version or under it.' }),
  connectorVersion: VersionFilter.openapi({ description: 'Only sites with this connector version or under it.' }),
});
export type SiteListFilter = Omit<z.infer<typeof ListSitesQuery>, 'state'>;

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
