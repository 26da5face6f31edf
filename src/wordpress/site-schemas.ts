import { z } from 'zod';

/**
 * The shapes of every answer Sitewarden reads from a site outside backups: WordPress core's REST
 * API and the connector's routes. Lenient on fields we do not use (sites add their own), strict
 * on the ones we do, so a wrong shape becomes `site-invalid-response` naming the route at the
 * boundary instead of a TypeError deep inside a feature.
 */

/** Plugins and themes Sitewarden manages on one site; a site reporting more is refused (`site-inventory-too-large`). */
export const MAX_PLUGINS_PER_SITE = 2_000;
export const MAX_THEMES_PER_SITE = 500;

const Text = z.string().max(10_000);
const Version = z.string().max(200);

const HttpUrl = z
  .string()
  .max(2048)
  .refine((value) => {
    try {
      const { protocol } = new URL(value);
      return protocol === 'http:' || protocol === 'https:';
    } catch {
      return false;
    }
  }, 'expected an http(s) URL');

/** The REST index (`/wp-json/`) read by discovery, once it named `wp/v2` among its namespaces. */
export const RestIndexSchema = z.looseObject({
  name: Text.nullish(),
  home: HttpUrl.optional(),
  url: HttpUrl.optional(),
  namespaces: z.array(z.string()),
  authentication: z
    .union([
      z.looseObject({
        'application-passwords': z
          .looseObject({ endpoints: z.looseObject({ authorization: z.string().max(2048).optional() }).optional() })
          .optional(),
      }),
      // PHP encodes an empty authentication map as [].
      z.array(z.never()),
    ])
    .optional(),
});
export type RestIndex = z.infer<typeof RestIndexSchema>;

/** `wp/v2/users/me?context=edit`: without an id and a login there is no user to connect as. */
export const CurrentUserSchema = z.looseObject({
  id: z.number().int().positive(),
  slug: z.string().min(1).max(200),
  username: z.string().min(1).max(200).optional(),
  name: Text,
  roles: z.array(z.string()).optional(),
  capabilities: z.record(z.string(), z.unknown()).optional(),
});

export const ApplicationPasswordIntrospectionSchema = z.looseObject({ uuid: z.string().min(1).max(64) });

/** One entry of `wp/v2/plugins`: `plugin` is `folder/file` (or `file`) without `.php`, and becomes a REST path. */
export const WordPressPluginSchema = z.looseObject({
  plugin: z
    .string()
    .min(1)
    .max(400)
    .regex(/^(?!\.\.?(?:\/|$))[^/\\]+(?:\/(?!\.\.?$)[^/\\]+)?$/, 'expected folder/file'),
  status: z.string().max(50),
  name: Text,
  version: Version,
});
export type WordPressPlugin = z.infer<typeof WordPressPluginSchema>;

export const WordPressPluginListSchema = z.array(WordPressPluginSchema);

/** `DELETE wp/v2/plugins/…` answers `{deleted, previous}`. */
export const DeletedPluginSchema = z.looseObject({ deleted: z.boolean() });

const WordPressThemeSchema = z.looseObject({
  stylesheet: z.string().min(1).max(200),
  template: z.string().max(200).optional(),
  status: z.string().max(50),
  name: z.union([Text, z.looseObject({ raw: Text.optional(), rendered: Text.optional() })]),
  version: Version,
});
export type WordPressTheme = z.infer<typeof WordPressThemeSchema>;

export const WordPressThemeListSchema = z.array(WordPressThemeSchema);

/** The connector's `info`; `features` from 1.1.0 on. */
export const ConnectorInfoSchema = z.looseObject({
  connector: z.string().regex(/^\d+(\.\d+){0,3}$/, 'expected a version such as 1.2.0'),
  features: z.array(z.string()).optional(),
  wordpress: Version,
  php: Version,
  multisite: z.boolean().optional(),
  filesystem: z.string().max(50).optional(),
  capabilities: z.record(z.string(), z.unknown()).optional(),
  // Since 1.4.0, for the inventory only: what is missing or malformed is unknown, never an error.
  timezone: z
    .object({ string: z.string().max(64), gmtOffset: z.number().min(-14).max(14) })
    .optional()
    .catch(undefined),
  database: z
    .object({ type: z.enum(['mysql', 'mariadb']), version: z.string().regex(/^\d+(\.\d+){0,3}$/) })
    .nullable()
    .optional()
    .catch(undefined),
});
export type ConnectorInfo = z.infer<typeof ConnectorInfoSchema>;

const offers = <T extends z.ZodType>(offer: T) =>
  z.union([
    z.record(z.string(), offer),
    // An older PHP encoding of "no offers".
    z.array(z.never()).transform(() => ({}) as Record<string, z.infer<T>>),
  ]);

export const AvailableUpdatesSchema = z.looseObject({
  checkedAt: z.string().max(64).nullable(),
  plugins: offers(z.looseObject({ slug: z.string().max(200).optional(), version: Version, newVersion: Version })),
  themes: offers(z.looseObject({ version: Version, newVersion: Version })),
  // Since 1.4.0, for the inventory only (unknown, never an error, when missing or malformed).
  requires: offers(z.array(z.string().max(200)).max(100))
    .optional()
    .catch(undefined),
  core: z
    .array(z.object({ version: Version }))
    .max(20)
    .optional()
    .catch(undefined),
  translations: z
    .array(
      z.object({
        type: z.enum(['core', 'plugin', 'theme']),
        slug: z.string().max(200),
        language: z.string().max(20),
        version: Version,
      }),
    )
    .max(2000)
    .optional()
    .catch(undefined),
});
export type AvailableUpdates = z.infer<typeof AvailableUpdatesSchema>;

export const PluginUpdatedSchema = z.looseObject({
  plugin: z.string().max(400),
  previousVersion: Version,
  version: Version,
  active: z.boolean(),
});
export const ThemeUpdatedSchema = z.looseObject({
  stylesheet: z.string().max(200),
  previousVersion: Version,
  version: Version,
  active: z.boolean(),
});
export const ThemeActivatedSchema = z.looseObject({
  stylesheet: z.string().max(200),
  active: z.boolean(),
  previous: z.string().max(200),
});
export const ThemeDeletedSchema = z.looseObject({ stylesheet: z.string().max(200), deleted: z.boolean() });
