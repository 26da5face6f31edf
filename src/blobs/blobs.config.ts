import { defineSettings } from '../shared/settings.js';
import { parseStoreLocation, type StoreLocation } from './store-location.js';

const BASE = 'SITEWARDEN_BLOB_';

/**
 * Cluster mode's blob store (issue 34, docs/cluster.md): SITEWARDEN_BLOB_*, the variables an offsite target's
 * location is written with (store-location.ts), without a passphrase. Null when none is set. src/config.ts
 * requires one in cluster mode and refuses one on a single machine, where blobs stay in the data directory.
 */
export function parseBlobStoreConfig(
  env: Record<string, string | undefined>,
  fail: (message: string) => Error,
): StoreLocation | null {
  const given = Object.keys(env).some((name) => name.startsWith(BASE) && env[name] !== '');
  return given ? parseStoreLocation(env, { base: BASE, of: 'the blob store' }, fail) : null;
}

const blob = (
  doc: string,
  extra: { default?: string; defaultText?: string; example?: string; comment?: string } = {},
) => ({
  ...extra,
  doc,
});

/** SITEWARDEN_BLOB_*: parseBlobStoreConfig reads them together, as parseOffsiteConfig reads a target's. */
export const BLOB_SETTINGS = defineSettings({
  SITEWARDEN_BLOB_BUCKET: blob(
    'cluster mode: the bucket every process keeps its blobs in (backups, audit reports, screenshots), under `backups/`, `reports/` and `screenshots/`; required there, with `SITEWARDEN_BLOB_ENDPOINT`, and refused on one machine (the data directory keeps them). The other `SITEWARDEN_BLOB_*` are written as an offsite target’s `SITEWARDEN_TARGET_<NAME>_*` ([cluster.md](cluster.md#blobs))',
    {
      defaultText: 'unset: the data directory',
      example: 'my-sitewarden-cluster',
      comment:
        "Cluster mode's blob store (docs/cluster.md): backups, audit reports and screenshots, shared by\nevery process. Required with SITEWARDEN_DATABASE_URL; refused without it. Or TYPE=directory and PATH.",
    },
  ),
  SITEWARDEN_BLOB_ENDPOINT: blob('the bucket’s S3 endpoint URL; the SDK talks to this address and no other', {
    defaultText: 'required with a bucket',
    example: 'https://s3.us-east-1.amazonaws.com',
  }),
  SITEWARDEN_BLOB_REGION: blob("the bucket's region (`auto` for R2)", { default: 'us-east-1' }),
  SITEWARDEN_BLOB_PREFIX: blob('keys start with it: several clusters can share a bucket under different prefixes', {
    default: 'sitewarden/',
  }),
  SITEWARDEN_BLOB_PATH_STYLE: blob('`on`: `endpoint/bucket/key` (MinIO and most self-hosted servers)', {
    default: 'off',
  }),
  SITEWARDEN_BLOB_ACCESS_KEY_ID: blob(
    "credentials, with `SECRET_ACCESS_KEY` (and `SESSION_TOKEN`); absent, the AWS SDK's environment and profile chain",
    { defaultText: "the SDK's chain", example: '' },
  ),
  SITEWARDEN_BLOB_SECRET_ACCESS_KEY: blob('the secret of `ACCESS_KEY_ID`', {
    defaultText: "the SDK's chain",
    example: '',
  }),
  SITEWARDEN_BLOB_SESSION_TOKEN: blob('a session token for temporary credentials', {
    defaultText: '(none)',
    example: '',
  }),
  SITEWARDEN_BLOB_PART_MB: blob('multipart part size (5–512): the memory one upload holds', { default: '9' }),
  SITEWARDEN_BLOB_UPLOAD_BUFFER_MB: blob('the memory all uploads to the bucket hold at once (5–4096)', {
    default: '18',
  }),
  SITEWARDEN_BLOB_MAX_ATTEMPTS: blob('attempts per request (1–20), with exponential backoff and jitter between them', {
    default: '5',
  }),
  SITEWARDEN_BLOB_TYPE: blob(
    '`s3`, or `directory`: a directory every process mounts (processes of one machine, a network file system), named by `SITEWARDEN_BLOB_PATH`',
    { default: 's3' },
  ),
  SITEWARDEN_BLOB_PATH: blob('the directory, for `SITEWARDEN_BLOB_TYPE=directory`', {
    defaultText: '—',
    example: '',
  }),
});
