import { z } from '@hono/zod-openapi';
import { decodeEntities } from '../plugins/plugins.schemas.js';
import type { AvailableUpdates } from '../wordpress/connector-client.js';
import type { WordPressTheme } from '../wordpress/wordpress-client.js';

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
