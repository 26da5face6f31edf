import { defineProblem, isAppError } from '../shared/errors.js';
import type { z } from 'zod';
import {
  AvailableUpdatesSchema,
  ConnectorInfoSchema,
  PluginUpdatedSchema,
  ThemeActivatedSchema,
  ThemeDeletedSchema,
  ThemeUpdatedSchema,
  type AvailableUpdates,
  type ConnectorInfo,
} from './site-schemas.js';
import type { WordPressSession } from './wordpress-client.js';

/**
 * The Sitewarden connector (connector/) adds what WordPress core's REST API cannot do:
 * updates, theme activation and deletion, update availability and versions.
 */
export const CONNECTOR_NAMESPACE = 'sitewarden/v1';
export const CONNECTOR_DOWNLOAD_PATH = '/api/connector.zip';

/**
 * The connector release that added each feature: a site whose connector is older is refused
 * that feature only (an old connector still updates plugins). Keep in step with
 * connector/includes/class-sitewarden-connector-info.php.
 */
const CONNECTOR_FEATURES = {
  updates: '1.0.0',
  'plugins/update': '1.0.0',
  themes: '1.0.0',
  // 1.2.0: every table whatever its name, schemas parsed by the daemon, restores built from data.
  backups: '1.2.0',
  restore: '1.2.0',
} as const;
export type ConnectorFeature = keyof typeof CONNECTOR_FEATURES;

const connectorProblems = {
  missing: defineProblem('connector-missing', 422, 'The Sitewarden connector is not installed on the site'),
  outdated: defineProblem('connector-outdated', 422, 'The Sitewarden connector on the site is too old'),
};

const installHint = `download it from GET ${CONNECTOR_DOWNLOAD_PATH} and upload it in wp-admin under Plugins → Add New → Upload Plugin, then activate it`;

export type { AvailableUpdates } from './site-schemas.js';

export interface Connector {
  /** The connector's info, or null when it is not installed (or not active). */
  info(): Promise<ConnectorInfo | null>;
  updates(options?: { refresh?: boolean }): Promise<AvailableUpdates>;
  /** Update offers when the connector is installed and answers; null otherwise (they are extra information). */
  updatesIfAvailable(): Promise<AvailableUpdates | null>;
  updatePlugin(file: string): Promise<z.infer<typeof PluginUpdatedSchema>>;
  updateTheme(stylesheet: string): Promise<z.infer<typeof ThemeUpdatedSchema>>;
  activateTheme(stylesheet: string): Promise<z.infer<typeof ThemeActivatedSchema>>;
  deleteTheme(stylesheet: string): Promise<z.infer<typeof ThemeDeletedSchema>>;
}

/** The connector's info, or null when it is not installed (or not active). */
async function readConnectorInfo(session: WordPressSession): Promise<ConnectorInfo | null> {
  try {
    return await session.call('GET', `${CONNECTOR_NAMESPACE}/info`, { schema: ConnectorInfoSchema });
  } catch (error) {
    if (isAppError(error) && error.extensions.siteCode === 'rest_no_route') return null;
    throw error;
  }
}

/** Throws connector-missing or connector-outdated (naming the feature and both versions) unless the connector has `feature`. */
function assertConnectorFeature(info: ConnectorInfo | null, feature: ConnectorFeature): void {
  if (!info)
    throw connectorProblems.missing.create(`this needs the Sitewarden connector plugin on the site: ${installHint}`);
  const required = CONNECTOR_FEATURES[feature];
  if (compareVersions(info.connector, required) < 0) {
    throw connectorProblems.outdated.create(
      `${feature} needs Sitewarden connector ${required} or newer and the site has ${info.connector}: ${updateHint}`,
      {
        feature,
        connectorVersion: info.connector,
        requiredVersion: required,
      },
    );
  }
}

const updateHint = `download the current one from GET ${CONNECTOR_DOWNLOAD_PATH} and upload it in wp-admin under Plugins → Add New → Upload Plugin (WordPress offers to replace the installed version)`;

/** Reads the connector's info once per session and checks each feature against it. */
export function createConnectorGate(session: WordPressSession): (feature: ConnectorFeature) => Promise<void> {
  let info: Promise<ConnectorInfo | null> | undefined;
  return async (feature) => {
    if (!info) {
      const reading = readConnectorInfo(session);
      // A failed read is not remembered: the next call asks again.
      reading.catch(() => {
        if (info === reading) info = undefined;
      });
      info = reading;
    }
    assertConnectorFeature(await info, feature);
  };
}

export function createConnector(
  session: WordPressSession,
  { operationTimeoutMs }: { operationTimeoutMs: number },
): Connector {
  const ensure = createConnectorGate(session);

  const operation = async <T>(
    feature: ConnectorFeature,
    route: string,
    json: unknown,
    schema: z.ZodType<T>,
  ): Promise<T> => {
    await ensure(feature);
    return session.call('POST', `${CONNECTOR_NAMESPACE}/${route}`, { json, timeoutMs: operationTimeoutMs, schema });
  };

  async function updates(options: { refresh?: boolean } = {}): Promise<AvailableUpdates> {
    await ensure('updates');
    return session.call('GET', `${CONNECTOR_NAMESPACE}/updates`, {
      query: { refresh: options.refresh ? 1 : undefined },
      timeoutMs: operationTimeoutMs,
      schema: AvailableUpdatesSchema,
    });
  }

  return {
    info: () => readConnectorInfo(session),
    updates,
    updatesIfAvailable: () => updates().catch(() => null),
    updatePlugin: (file) => operation('plugins/update', 'plugins/update', { plugin: file }, PluginUpdatedSchema),
    updateTheme: (stylesheet) => operation('themes', 'themes/update', { stylesheet }, ThemeUpdatedSchema),
    activateTheme: (stylesheet) => operation('themes', 'themes/activate', { stylesheet }, ThemeActivatedSchema),
    deleteTheme: (stylesheet) => operation('themes', 'themes/delete', { stylesheet }, ThemeDeletedSchema),
  };
}

/** Compares dotted numeric versions (`1.10.0` > `1.9.2`); missing parts count as 0. */
function compareVersions(a: string, b: string): number {
  const left = a.split('.').map((part) => parseInt(part, 10) || 0);
  const right = b.split('.').map((part) => parseInt(part, 10) || 0);
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    const difference = (left[i] ?? 0) - (right[i] ?? 0);
    if (difference !== 0) return Math.sign(difference);
  }
  return 0;
}
