/**
 * The Sitewarden connector (connector/) adds what WordPress core's REST API cannot do:
 * updates, theme activation and deletion, update availability and versions, backups and restores.
 * Every call to it goes through this client, behind the version gate (connector-gate.ts). The calls
 * live by what they do: connector-operations.ts (plugins, themes, core, translations),
 * connector-admin-login.ts (the sign-in link), connector-backup-calls.ts (backups and restores).
 */
import { createAdminLoginCalls } from './connector-admin-login.js';
import { createBackupCalls } from './connector-backup-calls.js';
import { createConnectorGate, readConnectorInfo } from './connector-gate.js';
import { createConnectorOperations } from './connector-operations.js';
import type { WordPressSession } from './wordpress-client.js';

export {
  compareVersions,
  CONNECTOR_DOWNLOAD_HINT,
  CONNECTOR_DOWNLOAD_PATH,
  connectorVersionHas,
} from './connector-gate.js';
export type { AvailableUpdates, ConnectorInfo } from './site-schemas.js';
export type { RowsCursor, SiteFileEntry, SiteTable } from './connector-backup-schemas.js';

export function createConnector(
  session: WordPressSession,
  { operationTimeoutMs, knownVersion = null }: { operationTimeoutMs: number; knownVersion?: string | null },
) {
  const gate = createConnectorGate(session, knownVersion);
  return {
    /** The connector's info, or null when it is not installed (or not active); read once per session, shared with the feature checks. */
    info: gate.read,
    /** The connector's info read afresh, for a health check: the session's cached read says nothing of the site now. */
    infoNow: () => readConnectorInfo(session),
    ...createConnectorOperations(session, gate, operationTimeoutMs),
    ...createAdminLoginCalls(session, gate),
    ...createBackupCalls(session, gate, operationTimeoutMs),
  };
}

export type Connector = ReturnType<typeof createConnector>;
/** What a backup or restore uses of the connector. */
export type BackupConnector = ReturnType<typeof createBackupCalls>;
