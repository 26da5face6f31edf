import { defineProblem, isAppError } from '../shared/errors.js';
import type { WordPressSession } from './wordpress-client.js';

/**
 * The Sitewarden connector (connector/) adds what WordPress core's REST API cannot do:
 * updates, theme activation and deletion, update availability and versions.
 */
export const CONNECTOR_NAMESPACE = 'sitewarden/v1';
export const MINIMUM_CONNECTOR_VERSION = '1.0.0';
export const CONNECTOR_DOWNLOAD_PATH = '/api/connector.zip';

export const connectorProblems = {
  missing: defineProblem('connector-missing', 422, 'The Sitewarden connector is not installed on the site'),
  outdated: defineProblem('connector-outdated', 422, 'The Sitewarden connector on the site is too old'),
};

const installHint = `download it from GET ${CONNECTOR_DOWNLOAD_PATH} and upload it in wp-admin under Plugins → Add New → Upload Plugin, then activate it`;

export interface ConnectorInfo {
  connector: string;
  wordpress: string;
  php: string;
  multisite: boolean;
  filesystem: string;
  capabilities: Record<string, boolean>;
}

export interface AvailableUpdates {
  checkedAt: string | null;
  plugins: Record<string, { slug: string; version: string; newVersion: string }>;
  themes: Record<string, { version: string; newVersion: string }>;
}

export interface Connector {
  /** The connector's info, or null when it is not installed (or not active). */
  info(): Promise<ConnectorInfo | null>;
  updates(options?: { refresh?: boolean }): Promise<AvailableUpdates>;
  /** Update offers when the connector is installed and answers; null otherwise (they are extra information). */
  updatesIfAvailable(): Promise<AvailableUpdates | null>;
  updatePlugin(file: string): Promise<{ plugin: string; previousVersion: string; version: string; active: boolean }>;
  updateTheme(stylesheet: string): Promise<{ stylesheet: string; previousVersion: string; version: string; active: boolean }>;
  activateTheme(stylesheet: string): Promise<{ stylesheet: string; active: boolean; previous: string }>;
  deleteTheme(stylesheet: string): Promise<{ stylesheet: string; deleted: boolean }>;
}

export function createConnector(session: WordPressSession, { operationTimeoutMs }: { operationTimeoutMs: number }): Connector {
  let checked: Promise<void> | undefined;

  /** Every operation first makes sure a recent enough connector answers. */
  async function ensureUsable(): Promise<void> {
    checked ??= (async () => {
      const info = await readInfo();
      if (!info) throw connectorProblems.missing.create(`this needs the Sitewarden connector plugin on the site: ${installHint}`);
      if (compareVersions(info.connector, MINIMUM_CONNECTOR_VERSION) < 0) {
        throw connectorProblems.outdated.create(`the site has connector ${info.connector}; ${MINIMUM_CONNECTOR_VERSION} or newer is needed: ${installHint}`, { connectorVersion: info.connector });
      }
    })();
    return checked;
  }

  async function readInfo(): Promise<ConnectorInfo | null> {
    try {
      return await session.call<ConnectorInfo>('GET', `${CONNECTOR_NAMESPACE}/info`);
    } catch (error) {
      if (isAppError(error) && error.extensions.siteCode === 'rest_no_route') return null;
      throw error;
    }
  }

  const operation = async <T>(route: string, json: unknown): Promise<T> => {
    await ensureUsable();
    return session.call<T>('POST', `${CONNECTOR_NAMESPACE}/${route}`, { json, timeoutMs: operationTimeoutMs });
  };

  async function updates(options: { refresh?: boolean } = {}): Promise<AvailableUpdates> {
    await ensureUsable();
    return session.call<AvailableUpdates>('GET', `${CONNECTOR_NAMESPACE}/updates`, { query: { refresh: options.refresh ? 1 : undefined }, timeoutMs: operationTimeoutMs });
  }

  return {
    info: readInfo,
    updates,
    updatesIfAvailable: () => updates().catch(() => null),
    updatePlugin: (file) => operation('plugins/update', { plugin: file }),
    updateTheme: (stylesheet) => operation('themes/update', { stylesheet }),
    activateTheme: (stylesheet) => operation('themes/activate', { stylesheet }),
    deleteTheme: (stylesheet) => operation('themes/delete', { stylesheet }),
  };
}

/** Compares dotted numeric versions (`1.10.0` > `1.9.2`); missing parts count as 0. */
export function compareVersions(a: string, b: string): number {
  const left = a.split('.').map((part) => parseInt(part, 10) || 0);
  const right = b.split('.').map((part) => parseInt(part, 10) || 0);
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    const difference = (left[i] ?? 0) - (right[i] ?? 0);
    if (difference !== 0) return Math.sign(difference);
  }
  return 0;
}
