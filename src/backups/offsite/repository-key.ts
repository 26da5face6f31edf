import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, scrypt } from 'node:crypto';
import { promisify } from 'node:util';
import { z } from 'zod';
import { offsiteProblems } from './offsite.errors.js';

const scryptAsync = promisify(scrypt) as (
  password: string,
  salt: Buffer,
  length: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

/** scrypt's cost: 2^15 × 8 × 128 bytes = 32 MiB and about 0.1 s per unlock, stored in the key file so it can be raised. */
const DEFAULT_KDF = { N: 2 ** 15, r: 8, p: 1 };
const WRAP_AAD = Buffer.from('sitewarden repository key v1');

const KeyFile = z.object({
  format: z.literal(1),
  kdf: z.object({
    name: z.literal('scrypt'),
    N: z
      .number()
      .int()
      .min(2 ** 14),
    r: z.number().int().min(1).max(32),
    p: z.number().int().min(1).max(16),
    salt: z.string(),
  }),
  nonce: z.string(),
  wrapped: z.string(),
  createdAt: z.string(),
});
export type KeyFile = z.infer<typeof KeyFile>;

/** The keys derived from a repository's random 64-byte master key. */
export interface RepositoryKeys {
  /** Seals objects, manifests and snapshots (each object under its own HKDF subkey). */
  data: Buffer;
  /** Names objects: HMAC of their content hash, so the bucket does not show which contents are known ones. */
  names: Buffer;
}

async function keyEncryptionKey(passphrase: string, kdf: KeyFile['kdf']): Promise<Buffer> {
  return scryptAsync(passphrase, Buffer.from(kdf.salt, 'base64'), 32, {
    N: kdf.N,
    r: kdf.r,
    p: kdf.p,
    maxmem: 256 * kdf.N * kdf.r + 1024 * 1024,
  });
}

/** A new key file wrapping `master` (a fresh one unless given: rotation keeps the master and rewraps it). */
export async function wrapRepositoryKey(
  passphrase: string,
  master: Buffer = randomBytes(64),
  now = new Date(),
): Promise<{ file: KeyFile; master: Buffer }> {
  const kdf = { name: 'scrypt' as const, ...DEFAULT_KDF, salt: randomBytes(32).toString('base64') };
  const kek = await keyEncryptionKey(passphrase, kdf);
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', kek, nonce);
  cipher.setAAD(WRAP_AAD);
  const wrapped = Buffer.concat([cipher.update(master), cipher.final(), cipher.getAuthTag()]);
  return {
    file: {
      format: 1,
      kdf,
      nonce: nonce.toString('base64'),
      wrapped: wrapped.toString('base64'),
      createdAt: now.toISOString(),
    },
    master,
  };
}

/** The master key a key file wraps; a wrong passphrase (or an altered file) is `backup-target-wrong-passphrase`. */
export async function unwrapRepositoryKey(passphrase: string, content: Buffer, target: string): Promise<Buffer> {
  let file: KeyFile;
  try {
    file = KeyFile.parse(JSON.parse(content.toString('utf8')));
  } catch {
    throw offsiteProblems.keyFileInvalid.create(
      `target ${target}: its key file (keys/repository) is not a Sitewarden key file`,
      {
        target,
      },
    );
  }
  const kek = await keyEncryptionKey(passphrase, file.kdf);
  const wrapped = Buffer.from(file.wrapped, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', kek, Buffer.from(file.nonce, 'base64'));
  decipher.setAAD(WRAP_AAD);
  decipher.setAuthTag(wrapped.subarray(wrapped.length - 16));
  try {
    return Buffer.concat([decipher.update(wrapped.subarray(0, wrapped.length - 16)), decipher.final()]);
  } catch {
    throw offsiteProblems.wrongPassphrase.create(
      `target ${target}: the passphrase does not open this repository's key (keys/repository); check SITEWARDEN_TARGET_*_PASSPHRASE`,
      { target },
    );
  }
}

export function deriveKeys(master: Buffer): RepositoryKeys {
  return {
    data: Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), 'sitewarden data v1', 32)),
    names: Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), 'sitewarden names v1', 32)),
  };
}

/** The keyed name of a content hash (or any label): equal contents get equal names only under the same key. */
export const keyedName = (keys: RepositoryKeys, label: string): string =>
  createHmac('sha256', keys.names).update(label).digest('hex');
