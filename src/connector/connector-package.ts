import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';

/** dist/sitewarden-connector.zip at the project root, found from src/ and from dist/src/. */
export function defaultConnectorZipPath(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  const candidates = [resolve(here, '../../dist/sitewarden-connector.zip'), resolve(here, '../../../dist/sitewarden-connector.zip')];
  return candidates.find((candidate) => existsSync(candidate)) ?? candidates[0]!;
}
