import { readFileSync } from 'node:fs';
import type { S3TargetConfig } from './s3-backend.js';

/** An offsite target as configured: where its repository lives and the passphrase that opens it. */
export type OffsiteTargetConfig = { name: string; passphrase: string } & (
  { type: 's3'; s3: S3TargetConfig } | { type: 'directory'; path: string }
);

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
    const value = (suffix: string) => {
      const found = env[variable(suffix)];
      return found === undefined || found === '' ? undefined : found;
    };
    const required = (suffix: string): string => {
      const found = value(suffix);
      if (found === undefined) throw fail(`${variable(suffix)} is required for target ${name}`);
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
    const passphraseFile = value('PASSPHRASE_FILE');
    const passphrase = passphraseFile ? readPassphrase(passphraseFile, fail) : value('PASSPHRASE');
    if (!passphrase || passphrase.length < 12)
      throw fail(`${variable('PASSPHRASE')} (or ${variable('PASSPHRASE_FILE')}) of at least 12 characters is required`);
    const type = value('TYPE') ?? 's3';
    if (type === 'directory') return { name, passphrase, type, path: required('PATH') };
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
      name,
      passphrase,
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
