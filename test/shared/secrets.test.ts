import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSecretBox } from '../../src/shared/secret-box.js';
import { KeyError, loadSecretKey } from '../../src/shared/secret-key.js';

describe('secrets at rest', () => {
  it('seals and opens, with a fresh nonce each time, and detects tampering', () => {
    const box = createSecretBox(randomBytes(32));
    const a = box.seal('abcd efgh ijkl mnop');
    expect(a).not.toContain('abcd');
    expect(box.seal('abcd efgh ijkl mnop')).not.toBe(a);
    expect(box.open(a)).toBe('abcd efgh ijkl mnop');
    const parts = a.split(':');
    parts[3] = Buffer.from('tampered').toString('base64');
    expect(() => box.open(parts.join(':'))).toThrow();
    expect(() => createSecretBox(randomBytes(32)).open(a)).toThrow();
  });

  it('creates a 0600 key file once and reuses it', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sw-key-'));
    const first = loadSecretKey({ secretKey: undefined, dataDir });
    expect(statSync(join(dataDir, 'secret.key')).mode & 0o777).toBe(0o600);
    expect(loadSecretKey({ secretKey: undefined, dataDir }).equals(first)).toBe(true);
  });

  it('takes a key from the environment and rejects a malformed one clearly', () => {
    const key = randomBytes(32);
    expect(loadSecretKey({ secretKey: key.toString('base64'), dataDir: '/nonexistent' }).equals(key)).toBe(true);
    expect(loadSecretKey({ secretKey: key.toString('hex'), dataDir: '/nonexistent' }).equals(key)).toBe(true);
    expect(() => loadSecretKey({ secretKey: 'short', dataDir: '/nonexistent' })).toThrow(KeyError);
    const dataDir = mkdtempSync(join(tmpdir(), 'sw-key-'));
    writeFileSync(join(dataDir, 'secret.key'), 'not a key');
    expect(() => loadSecretKey({ secretKey: undefined, dataDir })).toThrow(/32-byte key/);
    expect(readFileSync(join(dataDir, 'secret.key'), 'utf8')).toBe('not a key');
  });
});
