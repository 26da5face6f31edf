/**
 * The connector's version gate: which connector release added each feature, where to get the
 * connector, reading its info, and refusing (connector-missing, connector-outdated) a site whose
 * connector lacks what a call needs.
 */
import { defineProblem, isAppError } from '../shared/errors.js';
import { ConnectorInfoSchema, type ConnectorInfo } from './site-schemas.js';
import type { WordPressSession } from './wordpress-client.js';

export const CONNECTOR_NAMESPACE = 'sitewarden/v1';
export const CONNECTOR_DOWNLOAD_PATH = '/api/connector.zip';
/** Where to get the connector, for people (the dashboard's link, behind its sign-in) and programs (the API's, behind a token). */
export const CONNECTOR_DOWNLOAD_HINT = `the dashboard's /connector.zip (or GET ${CONNECTOR_DOWNLOAD_PATH} with an API token)`;

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
  // 1.5.0: plugin and theme updates that name the version expected, answering a refusal or the offer left.
  'updates/expected-version': '1.5.0',
  // 1.6.0: a single-use link that signs the application password's user in to wp-admin.
  'admin-login': '1.6.0',
  // 1.8.0: a theme installed by slug from the theme directory (WordPress's REST API installs plugins only).
  'themes/install': '1.8.0',
} as const;
export type ConnectorFeature = keyof typeof CONNECTOR_FEATURES;

/** Whether a connector of `version` (as the last sync stored it; null: none) has `feature`, without asking the site. */
export const connectorVersionHas = (version: string | null, feature: ConnectorFeature): boolean =>
  version !== null && compareVersions(version, CONNECTOR_FEATURES[feature]) >= 0;

const connectorProblems = {
  missing: defineProblem('connector-missing', 422, 'The Sitewarden connector is not installed on the site'),
  outdated: defineProblem('connector-outdated', 422, 'The Sitewarden connector on the site is too old'),
};

const installHint = `download it from ${CONNECTOR_DOWNLOAD_HINT} and upload it in wp-admin under Plugins → Add New → Upload Plugin, then activate it`;

/** The connector's info, or null when it is not installed (or not active). */
export async function readConnectorInfo(session: WordPressSession): Promise<ConnectorInfo | null> {
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

const updateHint = `download the current one from ${CONNECTOR_DOWNLOAD_HINT} and upload it in wp-admin under Plugins → Add New → Upload Plugin (WordPress offers to replace the installed version)`;

/**
 * For routes newer than the last version bump, once the site answered rest_no_route: throws
 * connector-missing, or connector-outdated naming `feature` and the site's connector version.
 */
export async function refuseNewerRoute(session: WordPressSession, feature: string): Promise<never> {
  const info = await readConnectorInfo(session);
  if (!info) assertConnectorFeature(null, 'updates');
  throw connectorProblems.outdated.create(
    `${feature} needs a newer Sitewarden connector than the site’s ${info!.connector}: ${updateHint}`,
    { feature, connectorVersion: info!.connector },
  );
}

/**
 * Reads the connector's info once per session (for `info()` and for checking each feature against it).
 * With the version the last sync stored (`knownVersion`), a feature that version has is let through
 * without reading the info first (one request less per operation); should the site answer that it
 * has no such route (the connector was removed or downgraded since), the info is read and the
 * feature checked, so the caller gets connector-missing or connector-outdated as before.
 */
export function createConnectorGate(session: WordPressSession, knownVersion: string | null) {
  let info: Promise<ConnectorInfo | null> | undefined;
  const read = (): Promise<ConnectorInfo | null> => {
    if (!info) {
      const reading = readConnectorInfo(session);
      // A failed read is not remembered: the next call asks again.
      reading.catch(() => {
        if (info === reading) info = undefined;
      });
      info = reading;
    }
    return info;
  };
  const ensure = async (feature: ConnectorFeature) => assertConnectorFeature(await read(), feature);
  const trusted = (feature: ConnectorFeature) =>
    !info && knownVersion !== null && compareVersions(knownVersion, CONNECTOR_FEATURES[feature]) >= 0;
  /** Calls a connector route behind the gate for `feature`. */
  const gated = async <T>(feature: ConnectorFeature, call: () => Promise<T>): Promise<T> => {
    if (!trusted(feature)) {
      await ensure(feature);
      return call();
    }
    try {
      return await call();
    } catch (error) {
      if (isAppError(error) && error.extensions.siteCode === 'rest_no_route')
        assertConnectorFeature(await read(), feature);
      throw error;
    }
  };
  /** Whether the version the last sync stored has `feature` (no request; false when unknown). */
  const known = (feature: ConnectorFeature) =>
    knownVersion !== null && compareVersions(knownVersion, CONNECTOR_FEATURES[feature]) >= 0;
  return { read, ensure, gated, known, knownVersion };
}
export type ConnectorGate = ReturnType<typeof createConnectorGate>;

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
