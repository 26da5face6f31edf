import { z } from '@hono/zod-openapi';
import { parseStored } from '../shared/stored-json.js';
import type { AvailableUpdates } from '../wordpress/connector-client.js';
import type { WordPressPlugin, WordPressTheme } from '../wordpress/wordpress-client.js';

/** What is installed on a site and which updates exist: the plugin and theme records every feature shows. */
export const PluginSchema = z
  .object({
    slug: z.string().openapi({
      description:
        'The plugin’s folder (`akismet` for `akismet/akismet.php`); a single-file plugin’s file name without `.php` (`hello` for `hello.php`).',
      example: 'akismet',
    }),
    file: z.string().openapi({
      description: 'The plugin’s main file relative to the plugins folder.',
      example: 'akismet/akismet.php',
    }),
    name: z.string(),
    version: z.string(),
    status: z.enum(['active', 'inactive', 'network-active']),
    update: z
      .object({ version: z.string() })
      .nullable()
      .openapi({ description: 'The newer version the site knows of, or null when none is known.' }),
    requires: z.array(z.string()).nullable().optional().openapi({
      description:
        'The plugins (slugs) its `Requires Plugins` header names (WordPress 6.5+); null when the connector (before 1.4.0) does not say.',
    }),
    requiredBy: z.array(z.string()).nullable().optional().openapi({
      description: 'The installed plugins (slugs) that require it; null when unknown.',
    }),
  })
  .openapi('Plugin');

export type Plugin = z.infer<typeof PluginSchema>;

/** WordPress's REST API names plugins `folder/file` without `.php`. */
export function pluginFromWordPress(plugin: WordPressPlugin): Plugin {
  const [folder, file] = plugin.plugin.includes('/') ? plugin.plugin.split('/', 2) : [null, plugin.plugin];
  return {
    slug: folder ?? file!,
    file: `${plugin.plugin}.php`,
    name: decodeEntities(plugin.name),
    version: plugin.version,
    status: plugin.status === 'network-active' ? 'network-active' : plugin.status === 'active' ? 'active' : 'inactive',
    update: null,
  };
}

/** WordPress sends names HTML-escaped. */
function decodeEntities(text: string): string {
  return text
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCodePoint(Number(code)))
    .replace(/&#x([0-9a-f]+);/gi, (_, code: string) => String.fromCodePoint(parseInt(code, 16)))
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** Adds the connector's update offers (keyed by plugin file) to plugins. */
export function withPluginUpdates(plugins: Plugin[], updates: AvailableUpdates | null): Plugin[] {
  return plugins.map((plugin) => {
    const offer = updates?.plugins[plugin.file];
    return offer ? { ...plugin, update: { version: offer.newVersion } } : plugin;
  });
}

/** Adds each plugin's requirements (connector 1.4.0+, keyed by plugin file) and, from them, its dependents. */
export function withPluginRequirements(
  plugins: Plugin[],
  updates: Pick<AvailableUpdates, 'requires'> | null,
): Plugin[] {
  const requires = updates?.requires;
  if (!requires) return plugins.map((plugin) => ({ ...plugin, requires: null, requiredBy: null }));
  const withRequires = plugins.map((plugin) => ({ ...plugin, requires: [...(requires[plugin.file] ?? [])].sort() }));
  return withRequires.map((plugin) => ({
    ...plugin,
    requiredBy: withRequires
      .filter((other) => other.requires.includes(plugin.slug))
      .map((other) => other.slug)
      .sort(),
  }));
}

export const ThemeSchema = z
  .object({
    slug: z.string().openapi({ description: 'The theme’s folder (its stylesheet).', example: 'twentytwentythree' }),
    name: z.string(),
    version: z.string(),
    status: z.enum(['active', 'inactive']),
    parent: z.string().nullable().openapi({ description: 'The parent theme’s slug for a child theme.' }),
    update: z
      .object({ version: z.string() })
      .nullable()
      .openapi({ description: 'The newer version the site knows of, or null when none is known.' }),
  })
  .openapi('Theme');

export type Theme = z.infer<typeof ThemeSchema>;

const PluginList = z.array(PluginSchema);
const ThemeList = z.array(ThemeSchema);
/** A site's stored inventory lists (its `pluginsJson`, `themesJson`), read with the schemas they were written by. */
export const storedPlugins = (json: string, siteId: string): Plugin[] =>
  parseStored(PluginList, json, `the stored plugin list of site ${siteId}`);
export const storedThemes = (json: string, siteId: string): Theme[] =>
  parseStored(ThemeList, json, `the stored theme list of site ${siteId}`);

export function themeFromWordPress(theme: WordPressTheme): Theme {
  const name =
    typeof theme.name === 'string' ? theme.name : (theme.name.raw ?? theme.name.rendered ?? theme.stylesheet);
  return {
    slug: theme.stylesheet,
    name: decodeEntities(name),
    version: theme.version,
    status: theme.status === 'active' ? 'active' : 'inactive',
    parent: theme.template && theme.template !== theme.stylesheet ? theme.template : null,
    update: null,
  };
}

/** Adds the connector's update offers (keyed by stylesheet) to themes. */
export function withThemeUpdates(themes: Theme[], updates: AvailableUpdates | null): Theme[] {
  return themes.map((theme) => {
    const offer = updates?.themes[theme.slug];
    return offer ? { ...theme, update: { version: offer.newVersion } } : theme;
  });
}
