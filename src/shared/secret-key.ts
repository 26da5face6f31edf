import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const SECRET_KEY_FILE = 'secret.key';

/**
 * The key that seals site credentials: from SITEWARDEN_SECRET_KEY (base64 or hex, 32 bytes),
 * or from a 0600 key file in the data directory, created on first start. Losing it means
 * reconnecting every site, so back it up with the data directory.
 */
export function loadSecretKey({ secretKey, dataDir }: { secretKey: string | undefined; dataDir: string }): Buffer {
  if (secretKey) return decodeKey(secretKey, 'SITEWARDEN_SECRET_KEY');
  const path = join(dataDir, SECRET_KEY_FILE);
  if (existsSync(path)) return decodeKey(readFileSync(path, 'utf8').trim(), path);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  const temporary = `${path}.tmp-${process.pid}`;
  writeFileSync(temporary, `${key.toString('base64')}\n`, { mode: 0o600 });
  renameSync(temporary, path);
  return key;
}

function decodeKey(text: string, source: string): Buffer {
  const key = /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (key.length !== 32)
    throw new KeyError(`${source} must hold a 32-byte key in base64 or hex (openssl rand -base64 32)`);
  return key;
}

export class KeyError extends Error {
  override name = 'KeyError';
}
