import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * The version of the connector in connector/ (its plugin header, which its `SITEWARDEN_CONNECTOR_VERSION`
 * must repeat): what a test site runs and `GET sitewarden/v1/info` reports. Tests that mean "the current
 * connector" use it, so a connector release edits no test; a test about a given release (the first with a
 * route, an older one refused) keeps that version written out.
 */
export const CONNECTOR_VERSION = connectorVersion();

function connectorVersion(): string {
  const file = resolve(import.meta.dirname, '../../connector/sitewarden-connector.php');
  const source = readFileSync(file, 'utf8');
  const header = /^\s*\*\s*Version:\s*(\S+)\s*$/m.exec(source)?.[1];
  const constant = /define\(\s*'SITEWARDEN_CONNECTOR_VERSION',\s*'([^']+)'\s*\)/.exec(source)?.[1];
  if (!header || header !== constant)
    throw new Error(`${file}: the header's Version (${header}) and SITEWARDEN_CONNECTOR_VERSION (${constant}) differ`);
  return header;
}
