import { readFileSync } from 'node:fs';

/** The package version, read once from package.json (found from src/ and from dist/src/). */
function readVersion(): string {
  for (const candidate of ['../package.json', '../../package.json']) {
    try {
      return (JSON.parse(readFileSync(new URL(candidate, import.meta.url), 'utf8')) as { version: string }).version;
    } catch {
      // try the next location
    }
  }
  return '0.0.0';
}

export const VERSION = readVersion();
