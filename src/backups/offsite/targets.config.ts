import { readFileSync } from 'node:fs';
import { defineSettings } from '../../shared/settings.js';
import { parseStoreLocation, type StoreLocation } from '../../blobs/store-location.js';

/** An offsite target as configured: where its repository lives and the passphrase that opens it. */
type OffsiteTargetConfig = { name: string; passphrase: string } & StoreLocation;

export interface OffsiteConfig {
  targets: OffsiteTargetConfig[];
  /** The targets every site backs up to (`local` is the data directory's store): SITEWARDEN_BACKUP_TARGETS. */
  defaultTargets: string[];
}

export const LOCAL_TARGET = 'local';
const NAME = /^[a-z][a-z0-9_]{0,31}$/;

/**
 * Reads SITEWARDEN_TARGETS (names) and, per name, SITEWARDEN_TARGET_<NAME>_* (docs/offsite.md,
 * “Configuration”). `fail` turns a message into the caller's configuration error.
 */
export function parseOffsiteConfig(
  env: Record<string, string | undefined>,
  fail: (message: string) => Error,
): OffsiteConfig {
  const names = (env.SITEWARDEN_TARGETS ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  const targets = names.map((name): OffsiteTargetConfig => {
    if (!NAME.test(name) || name === LOCAL_TARGET)
      throw fail(`SITEWARDEN_TARGETS: ${JSON.stringify(name)} is not a target name (a-z, 0-9, _; not "local")`);
    const variable = (suffix: string) => `SITEWARDEN_TARGET_${name.toUpperCase()}_${suffix}`;
    const value = (suffix: string) => env[variable(suffix)] || undefined;
    const passphraseFile = value('PASSPHRASE_FILE');
    const passphrase = passphraseFile ? readPassphrase(passphraseFile, fail) : value('PASSPHRASE');
    if (!passphrase || passphrase.length < 12)
      throw fail(`${variable('PASSPHRASE')} (or ${variable('PASSPHRASE_FILE')}) of at least 12 characters is required`);
    return {
      name,
      passphrase,
      ...parseStoreLocation(env, { base: variable(''), of: `target ${name}` }, fail),
    };
  });
  const known = new Set([LOCAL_TARGET, ...names]);
  const defaultTargets = env.SITEWARDEN_BACKUP_TARGETS
    ? env.SITEWARDEN_BACKUP_TARGETS.split(',')
        .map((name) => name.trim().toLowerCase())
        .filter((name) => name !== '')
    : [LOCAL_TARGET, ...names];
  for (const name of defaultTargets)
    if (!known.has(name))
      throw fail(
        `SITEWARDEN_BACKUP_TARGETS: ${JSON.stringify(name)} is neither "local" nor named in SITEWARDEN_TARGETS`,
      );
  if (!defaultTargets.includes(LOCAL_TARGET))
    throw fail('SITEWARDEN_BACKUP_TARGETS must include "local": the local store is where backups are taken first');
  return { targets, defaultTargets };
}

function readPassphrase(path: string, fail: (message: string) => Error): string {
  try {
    return readFileSync(path, 'utf8').replace(/\r?\n$/, '');
  } catch (error) {
    throw fail(`cannot read the passphrase file ${path}: ${(error as Error).message}`);
  }
}

const target = (doc: string, extra: { default?: string; defaultText?: string; example?: string } = {}) => ({
  ...extra,
  doc,
});

/**
 * SITEWARDEN_TARGETS, SITEWARDEN_TARGET_<NAME>_* and SITEWARDEN_BACKUP_TARGETS: parseOffsiteConfig reads them. A
 * target's variables are declared as those of a target named `name` (the docs write `<NAME>`).
 */
export const OFFSITE_SETTINGS = defineSettings({
  SITEWARDEN_TARGETS: {
    defaultText: '(none)',
    example: 'offsite',
    doc: 'names of offsite backup targets (`offsite,nas`; `a-z`, `0-9`, `_`), each configured by the `SITEWARDEN_TARGET_<NAME>_*` below; examples for AWS, B2, R2 and MinIO in [docs/offsite.md](offsite.md)',
    readme: 'offsite backup targets (S3-compatible or a directory), see [docs/offsite.md](docs/offsite.md)',
    comment:
      'Offsite targets (docs/offsite.md): backups are copied, encrypted, to each target a site backs\nup to. Keep the passphrase somewhere besides this machine: without it the copies are lost.',
  },
  SITEWARDEN_TARGET_NAME_TYPE: target('`s3`, or `directory` (then only `PATH` and the passphrase)', { default: 's3' }),
  SITEWARDEN_TARGET_NAME_ENDPOINT: target('the S3 endpoint URL; the SDK talks to this address and no other', {
    defaultText: 'required',
    example: 'https://s3.us-east-1.amazonaws.com',
  }),
  SITEWARDEN_TARGET_NAME_REGION: target("the bucket's region (`auto` for R2)", {
    default: 'us-east-1',
  }),
  SITEWARDEN_TARGET_NAME_BUCKET: target('an existing bucket', {
    defaultText: 'required',
    example: 'my-sitewarden-backups',
  }),
  SITEWARDEN_TARGET_NAME_PREFIX: target(
    'keys start with it: several daemons can share a bucket under different prefixes',
    { default: 'sitewarden/' },
  ),
  SITEWARDEN_TARGET_NAME_PATH_STYLE: target(
    '`on`: `endpoint/bucket/key` rather than `bucket.endpoint/key` (MinIO and most self-hosted servers)',
    { default: 'off' },
  ),
  SITEWARDEN_TARGET_NAME_ACCESS_KEY_ID: target(
    "credentials, with `SECRET_ACCESS_KEY` (and `SESSION_TOKEN`); absent, the AWS SDK's environment and profile chain (`AWS_ACCESS_KEY_ID`, `AWS_PROFILE`, `~/.aws/credentials`…)",
    { defaultText: "the SDK's chain", example: '' },
  ),
  SITEWARDEN_TARGET_NAME_SECRET_ACCESS_KEY: target('the secret of `ACCESS_KEY_ID`', {
    defaultText: "the SDK's chain",
    example: '',
  }),
  SITEWARDEN_TARGET_NAME_SESSION_TOKEN: target('a session token for temporary credentials', {
    defaultText: '(none)',
    example: '',
  }),
  SITEWARDEN_TARGET_NAME_PASSPHRASE: target(
    "the repository's passphrase, at least 12 characters; this or `PASSPHRASE_FILE` is required",
    { defaultText: 'required', example: '' },
  ),
  SITEWARDEN_TARGET_NAME_PASSPHRASE_FILE: target('a file holding the passphrase (keeps it out of the environment)', {
    defaultText: '(none)',
    example: '/etc/sitewarden/offsite.passphrase',
  }),
  SITEWARDEN_TARGET_NAME_PART_MB: target(
    'multipart part size (5–512): the memory one upload holds, whatever the object’s size; 9 MiB lets a backup chunk (8 MiB, a little more once gzip and sealing frame it) go up in one request',
    { default: '9' },
  ),
  SITEWARDEN_TARGET_NAME_UPLOAD_BUFFER_MB: target(
    'the memory all uploads to the target hold at once (at least one part; 5–4096)',
    { default: '18' },
  ),
  SITEWARDEN_TARGET_NAME_MAX_ATTEMPTS: target(
    'attempts per request (1–20), with exponential backoff and jitter between them',
    { default: '5' },
  ),
  SITEWARDEN_TARGET_NAME_PATH: target('the directory, for `TYPE=directory`', {
    defaultText: '—',
    example: '',
  }),
  SITEWARDEN_BACKUP_TARGETS: {
    defaultText: '`local` + every target',
    example: 'local,offsite',
    doc: 'the targets every site backs up to; `local` (the data directory) is always one of them',
  },
});
