import type { S3TargetConfig } from './s3-backend.js';
import { createDirectoryBackend, type BlobBackend } from './blob-backend.js';

/** Where blobs are kept: an S3-compatible bucket, or a directory (a mounted disk, a shared file system). */
export type StoreLocation = { type: 's3'; s3: S3TargetConfig } | { type: 'directory'; path: string };

/**
 * Reads a store's location from the variables of one family, `<base>TYPE`, `<base>BUCKET`, `<base>ENDPOINT`…:
 * an offsite target's (`SITEWARDEN_TARGET_<NAME>_`, backups/offsite/targets.config.ts) and the cluster's blob
 * store (`SITEWARDEN_BLOB_`, blobs.config.ts) are written the same way, so a user who wrote one can write the
 * other. `fail` turns a message into the caller's configuration error.
 */
export function parseStoreLocation(
  env: Record<string, string | undefined>,
  { base, of }: { base: string; /** Whose variables, for messages: `target offsite`. */ of: string },
  fail: (message: string) => Error,
): StoreLocation {
  const variable = (suffix: string) => `${base}${suffix}`;
  const value = (suffix: string) => {
    const found = env[variable(suffix)];
    return found === undefined || found === '' ? undefined : found;
  };
  const required = (suffix: string): string => {
    const found = value(suffix);
    if (found === undefined) throw fail(`${variable(suffix)} is required for ${of}`);
    return found;
  };
  const number = (suffix: string, fallback: number, min: number, max: number) => {
    const raw = value(suffix);
    if (raw === undefined) return fallback;
    const parsed = Number(raw);
    if (!Number.isInteger(parsed) || parsed < min || parsed > max)
      throw fail(`${variable(suffix)} must be a whole number from ${min} to ${max}`);
    return parsed;
  };
  const type = value('TYPE') ?? 's3';
  if (type === 'directory') return { type, path: required('PATH') };
  if (type !== 's3') throw fail(`${variable('TYPE')} must be s3 or directory`);
  const endpoint = required('ENDPOINT');
  if (!/^https?:\/\/[^/]+/.test(endpoint)) throw fail(`${variable('ENDPOINT')} must be an http(s) URL`);
  const pathStyle = value('PATH_STYLE') ?? 'off';
  if (pathStyle !== 'on' && pathStyle !== 'off') throw fail(`${variable('PATH_STYLE')} must be on or off`);
  const accessKeyId = value('ACCESS_KEY_ID');
  const secretAccessKey = value('SECRET_ACCESS_KEY');
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined))
    throw fail(`${variable('ACCESS_KEY_ID')} and ${variable('SECRET_ACCESS_KEY')} go together`);
  let prefix = value('PREFIX') ?? 'sitewarden/';
  if (!prefix.endsWith('/')) prefix += '/';
  return {
    type,
    s3: {
      endpoint,
      region: value('REGION') ?? 'us-east-1',
      bucket: required('BUCKET'),
      prefix,
      forcePathStyle: pathStyle === 'on',
      credentials:
        accessKeyId && secretAccessKey
          ? { accessKeyId, secretAccessKey, sessionToken: value('SESSION_TOKEN') }
          : undefined,
      partBytes: number('PART_MB', 9, 5, 512) * 1024 * 1024,
      uploadBufferBytes: number('UPLOAD_BUFFER_MB', 18, 5, 4096) * 1024 * 1024,
      maxAttempts: number('MAX_ATTEMPTS', 5, 1, 20),
    },
  };
}

/** The backend of a location. The S3 client is loaded with the first bucket opened: a daemon without one never holds it. */
export async function openStoreLocation(location: StoreLocation): Promise<BlobBackend> {
  return location.type === 's3'
    ? (await import('./s3-backend.js')).createS3Backend(location.s3)
    : createDirectoryBackend(location.path);
}
