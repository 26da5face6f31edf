/**
 * The connector's calls on a site's plugins, themes, core and translations: update offers, updates
 * (`updateExpecting` with its fallback for connectors before 1.5.0), theme install, activation and
 * deletion, and plugin status under WordPress's dependency rules.
 */
import { z } from 'zod';
import { isAppError } from '../shared/errors.js';
import {
  CoreUpdatedSchema,
  ExpectedPluginUpdateSchema,
  ExpectedThemeUpdateSchema,
  PluginStatusAnswerSchema,
  TranslationsUpdatedSchema,
  type CoreUpdated,
  type ExpectedPluginUpdate,
  type ExpectedThemeUpdate,
  type PluginStatusAnswer,
  type TranslationsUpdated,
} from './connector-operation-schemas.js';
import {
  CONNECTOR_NAMESPACE,
  connectorVersionHas,
  refuseNewerRoute,
  type ConnectorFeature,
  type ConnectorGate,
} from './connector-gate.js';
import {
  AvailableUpdatesSchema,
  PluginUpdatedSchema,
  ThemeActivatedSchema,
  ThemeDeletedSchema,
  ThemeUpdatedSchema,
  type AvailableUpdates,
} from './site-schemas.js';
import type { WordPressSession } from './wordpress-client.js';

/**
 * A theme the connector installed (1.8.0+): its folder (the stylesheet, checked as a name that
 * cannot climb out of the themes folder), its name and version, and whether it is active.
 */
const ThemeInstalledSchema = z.object({
  stylesheet: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[A-Za-z0-9._-]+$/)
    .refine((name) => name !== '.' && name !== '..', 'expected a theme folder name'),
  name: z.string().max(500),
  version: z.string().max(200),
  active: z.boolean(),
});
export type ThemeInstalled = z.infer<typeof ThemeInstalledSchema>;

export function createConnectorOperations(
  session: WordPressSession,
  { gated, known, read: cachedInfo, knownVersion }: ConnectorGate,
  operationTimeoutMs: number,
) {
  const operation = <T>(feature: ConnectorFeature, route: string, json: unknown, schema: z.ZodType<T>): Promise<T> =>
    gated(feature, () =>
      session.call('POST', `${CONNECTOR_NAMESPACE}/${route}`, { json, timeoutMs: operationTimeoutMs, schema }),
    );

  const updates = (options: { refresh?: boolean } = {}): Promise<AvailableUpdates> =>
    gated('updates', () =>
      session.call('GET', `${CONNECTOR_NAMESPACE}/updates`, {
        query: { refresh: options.refresh ? 1 : undefined },
        timeoutMs: operationTimeoutMs,
        schema: AvailableUpdatesSchema,
      }),
    );

  /**
   * For routes newer than the last version bump: a connector that answers rest_no_route is
   * missing or predates the route, which the problem says.
   */
  const newerOperation = async <T>(feature: string, route: string, json: unknown, schema: z.ZodType<T>): Promise<T> => {
    try {
      return await session.call('POST', `${CONNECTOR_NAMESPACE}/${route}`, {
        json,
        timeoutMs: operationTimeoutMs,
        schema,
      });
    } catch (error) {
      if (!isAppError(error) || error.extensions.siteCode !== 'rest_no_route') throw error;
      return refuseNewerRoute(session, feature);
    }
  };

  /**
   * Whether the connector checks the offer in the update request itself (`updates/expected-version`):
   * as the version the last sync stored says (no request), else as its info says (read once per session).
   */
  const checksOffers = async (): Promise<boolean> =>
    knownVersion !== null
      ? known('updates/expected-version')
      : connectorVersionHas((await cachedInfo())?.connector ?? null, 'updates/expected-version');

  /** The installed version of a plugin (its file) or theme (its stylesheet), from WordPress's list; null: not installed. */
  const installedVersion = async (kind: 'plugin' | 'theme', item: string): Promise<string | null> =>
    kind === 'plugin'
      ? ((await session.listPlugins()).find((plugin) => `${plugin.plugin}.php` === item)?.version ?? null)
      : ((await session.listThemes()).find((theme) => theme.stylesheet === item)?.version ?? null);

  /**
   * Updates a plugin (its file) or theme (its stylesheet) only when the site offers `expectedVersion`
   * (null: any version offered): refused (nothing changed) with what the site has and offers now, else
   * updated. Connector 1.5.0+ checks the offer in the update request itself; an older one cannot, so
   * its offers are read first and the item updated only when they match, answered the same way (a
   * refusal with nothing offered reads the installed version from WordPress's list).
   */
  function updateExpecting(kind: 'plugin', file: string, expectedVersion: string | null): Promise<ExpectedPluginUpdate>;
  function updateExpecting(
    kind: 'theme',
    stylesheet: string,
    expectedVersion: string | null,
  ): Promise<ExpectedThemeUpdate>;
  async function updateExpecting(
    kind: 'plugin' | 'theme',
    item: string,
    expectedVersion: string | null,
  ): Promise<ExpectedPluginUpdate | ExpectedThemeUpdate> {
    if (await checksOffers())
      return kind === 'plugin'
        ? operation(
            'updates/expected-version',
            'plugins/update',
            { plugin: item, expectedVersion: expectedVersion ?? '' },
            ExpectedPluginUpdateSchema,
          )
        : operation(
            'updates/expected-version',
            'themes/update',
            { stylesheet: item, expectedVersion: expectedVersion ?? '' },
            ExpectedThemeUpdateSchema,
          );
    const offers = (await updates())[kind === 'plugin' ? 'plugins' : 'themes'];
    const offer = Object.hasOwn(offers, item) ? offers[item] : undefined;
    if (offer && (expectedVersion === null || offer.newVersion === expectedVersion)) {
      // Only the fields checked: the rest of an answer the site wrote (an `offer`, `requires`) is not passed on.
      const answer = (updated: { previousVersion: string; version: string; active: boolean }) => ({
        result: 'updated' as const,
        previousVersion: updated.previousVersion,
        version: updated.version,
        active: updated.active,
      });
      if (kind === 'plugin') {
        const updated = await updatePlugin(item);
        return { ...answer(updated), plugin: updated.plugin };
      }
      const updated = await updateTheme(item);
      return { ...answer(updated), stylesheet: updated.stylesheet };
    }
    // As connector 1.5.0 refuses it (connector/includes/class-sitewarden-connector-updates.php).
    return {
      result: 'refused',
      code: 'sitewarden_offer_changed',
      message: offer
        ? `${item} is offered at ${offer.newVersion}, not ${expectedVersion}.`
        : `No update of ${item} is offered.`,
      version: offer ? offer.version : await installedVersion(kind, item),
      offer: offer ? { version: offer.version, newVersion: offer.newVersion } : null,
    };
  }

  const updatePlugin = (file: string) =>
    operation('plugins/update', 'plugins/update', { plugin: file }, PluginUpdatedSchema);
  const updateTheme = (stylesheet: string) => operation('themes', 'themes/update', { stylesheet }, ThemeUpdatedSchema);

  return {
    updates,
    /** Update offers when the connector is installed and answers; null otherwise (they are extra information). */
    updatesIfAvailable: () => updates().catch(() => null),
    updatePlugin,
    updateTheme,
    updateExpecting,
    /** Installs a theme by slug from the theme directory, and with `activate` switches to it (connector 1.8.0+). */
    installTheme: (slug: string, options: { activate?: boolean } = {}): Promise<ThemeInstalled> =>
      operation(
        'themes/install',
        'themes/install',
        { slug, activate: options.activate ?? false },
        ThemeInstalledSchema,
      ),
    activateTheme: (stylesheet: string) => operation('themes', 'themes/activate', { stylesheet }, ThemeActivatedSchema),
    deleteTheme: (stylesheet: string) => operation('themes', 'themes/delete', { stylesheet }, ThemeDeletedSchema),

    /**
     * Activates, deactivates or deletes a plugin under WordPress's plugin dependency rules, checked
     * on the site in the same request; null when the site's connector predates these routes.
     */
    async changePluginStatus(
      action: 'activate' | 'deactivate' | 'delete',
      file: string,
      options: { force?: boolean } = {},
    ): Promise<PluginStatusAnswer | null> {
      try {
        return await session.call('POST', `${CONNECTOR_NAMESPACE}/plugins/${action}`, {
          json: { plugin: file, force: options.force ?? false },
          timeoutMs: operationTimeoutMs,
          schema: PluginStatusAnswerSchema,
        });
      } catch (error) {
        if (isAppError(error) && error.extensions.siteCode === 'rest_no_route') return null;
        throw error;
      }
    },

    /** Updates WordPress core to `version` (one WordPress offers) or to the newest offered. */
    updateCore: (version?: string): Promise<CoreUpdated> =>
      newerOperation('core', 'core/update', { version: version ?? '' }, CoreUpdatedSchema),

    /** Installs every language pack WordPress's update checks offer (core, plugins, themes). */
    updateTranslations: (): Promise<TranslationsUpdated> =>
      newerOperation('translations', 'translations/update', {}, TranslationsUpdatedSchema),
  };
}
