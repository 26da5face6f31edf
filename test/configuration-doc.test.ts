import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { configurationFiles, EXAMPLE, PAGE, README } from '../scripts/configuration-doc.mjs';
import { loadConfig, SETTINGS } from '../src/config.js';
import type { Settings } from '../src/shared/settings.js';

/**
 * Issue 34: each setting is declared once, next to its feature (src/shared/settings.ts), and
 * docs/configuration.md, systemd/sitewarden.env.example and the README's table are written from the
 * declarations (`npm run docs:configuration`).
 */
const root = resolve(import.meta.dirname, '..');
const declared = SETTINGS.flatMap((group) => Object.entries(group));
const names = new Set(declared.map(([name]) => name));
const scratch = mkdtempSync(join(tmpdir(), 'sitewarden-settings-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The variables a setting needs beside it to be read at all: single sign-on's required ones, a target's. */
const OIDC = {
  SITEWARDEN_OIDC_ISSUER: 'https://sso.example.com/realms/staff',
  SITEWARDEN_OIDC_CLIENT_ID: 'sitewarden',
  SITEWARDEN_OIDC_CLIENT_SECRET: 'secret',
  SITEWARDEN_OIDC_ROLE_MAP: '*=viewer',
};
/** A target named `name`: its variables are the very names the declarations use (SITEWARDEN_TARGET_NAME_*). */
const TARGET = {
  SITEWARDEN_TARGETS: 'name',
  SITEWARDEN_TARGET_NAME_ACCESS_KEY_ID: 'key',
  SITEWARDEN_TARGET_NAME_SECRET_ACCESS_KEY: 'secret',
  SITEWARDEN_TARGET_NAME_ENDPOINT: 'https://s3.example.com',
  SITEWARDEN_TARGET_NAME_BUCKET: 'backups',
  SITEWARDEN_TARGET_NAME_PASSPHRASE: 'a passphrase of some length',
};
/** Cluster mode with its blob store in a bucket: SITEWARDEN_BLOB_* are read only there. */
const BLOB = {
  SITEWARDEN_DATABASE_URL: 'postgres://sitewarden@db.example.com/sitewarden',
  SITEWARDEN_SECRET_KEY: Buffer.alloc(32, 1).toString('base64'),
  SITEWARDEN_BLOB_ACCESS_KEY_ID: 'key',
  SITEWARDEN_BLOB_SECRET_ACCESS_KEY: 'secret',
  SITEWARDEN_BLOB_ENDPOINT: 'https://s3.example.com',
  SITEWARDEN_BLOB_BUCKET: 'blobs',
};
const contextOf = (name: string): Record<string, string> =>
  name.startsWith('SITEWARDEN_OIDC_')
    ? OIDC
    : name.startsWith('SITEWARDEN_TARGET_NAME_')
      ? TARGET
      : name.startsWith('SITEWARDEN_BLOB_')
        ? BLOB
        : {};

/** loadConfig on `env`, and every variable it read from it (present or not). */
function reads(env: Record<string, string>): Set<string> {
  const read = new Set<string>();
  loadConfig(
    new Proxy(env, {
      get(target, key) {
        if (typeof key === 'string') read.add(key);
        return Reflect.get(target, key) as unknown;
      },
    }),
  );
  return read;
}

describe('the configuration, declared once', () => {
  it('gives docs/configuration.md, the example env file and the README what npm run docs:configuration writes', () => {
    for (const file of configurationFiles(SETTINGS))
      expect(file.now, `${file.path}: run npm run docs:configuration`).toBe(file.wanted);
  });

  it('names the file a changed declaration leaves stale, and only that one', () => {
    const changed: Settings[] = SETTINGS.map((group) =>
      'SITEWARDEN_WEBHOOK_TIMEOUT_MS' in group
        ? { ...group, SITEWARDEN_WEBHOOK_TIMEOUT_MS: { ...group.SITEWARDEN_WEBHOOK_TIMEOUT_MS!, doc: 'changed' } }
        : group,
    );
    const stale = (groups: readonly Settings[]) =>
      configurationFiles(groups)
        .filter((file) => file.now !== file.wanted)
        .map((file) => file.path);
    expect(stale(changed)).toEqual([PAGE]);
    const renamed: Settings[] = SETTINGS.map((group) =>
      'SITEWARDEN_HOST' in group
        ? { ...group, SITEWARDEN_HOST: { ...group.SITEWARDEN_HOST!, default: '0.0.0.0' } }
        : group,
    );
    expect(stale(renamed)).toEqual([PAGE, EXAMPLE, README]);
  });

  it('writes every variable in the docs table and, commented out with its default, in the example file', () => {
    const page = readFileSync(join(root, PAGE), 'utf8');
    const example = readFileSync(join(root, EXAMPLE), 'utf8');
    expect(declared.length).toBeGreaterThan(80);
    for (const [name, setting] of declared) {
      const shown = name.replace('SITEWARDEN_TARGET_NAME_', 'SITEWARDEN_TARGET_<NAME>_');
      expect(page, name).toMatch(new RegExp(`^\\| \`${shown.replace(/[<>]/g, '\\$&')}\` \\| [^|\\n]+ \\| `, 'm'));
      const line = `#${name.replace('SITEWARDEN_TARGET_NAME_', 'SITEWARDEN_TARGET_OFFSITE_')}=`;
      expect(example, name).toContain(`\n${line}${setting.default ?? setting.example ?? ''}\n`);
    }
  });

  it('documents each default that is a value as the one loadConfig applies', () => {
    let checked = 0;
    for (const [name, setting] of declared) {
      if (setting.default === undefined) continue;
      const context = contextOf(name);
      expect(loadConfig({ ...context, [name]: setting.default }), name).toEqual(loadConfig(context));
      checked += 1;
    }
    expect(checked).toBeGreaterThan(60);
  });

  it('declares every variable loadConfig reads, and loadConfig reads every one declared', () => {
    const passphraseFile = join(scratch, 'passphrase');
    writeFileSync(passphraseFile, 'a passphrase of some length\n');
    const read = new Set([
      ...reads({}),
      ...reads(OIDC),
      ...reads(TARGET),
      ...reads(BLOB),
      ...reads({ ...BLOB, SITEWARDEN_BLOB_TYPE: 'directory', SITEWARDEN_BLOB_PATH: scratch }),
      ...reads({
        SITEWARDEN_TARGETS: 'name',
        SITEWARDEN_TARGET_NAME_TYPE: 'directory',
        SITEWARDEN_TARGET_NAME_PATH: scratch,
        SITEWARDEN_TARGET_NAME_PASSPHRASE_FILE: passphraseFile,
      }),
    ]);
    const variables = [...read].filter((key) => key.startsWith('SITEWARDEN_') || key === 'CHROME_PATH');
    for (const variable of variables) expect(names, `${variable} is read but not declared`).toContain(variable);
    // Those with a schema are read by config.ts's z.object; the others by their feature's own parser.
    for (const [name, setting] of declared)
      if (!setting.schema) expect(variables, `${name} is declared but never read`).toContain(name);
  });

  it('declares every SITEWARDEN_ variable src/ reads from an environment (a name, or the prefix of declared names)', () => {
    const reads = /\b(?:process\.)?env(?:\.|\[\s*['"`])(SITEWARDEN_[A-Z0-9_]*)/g;
    const tokens = new Set(sources(join(root, 'src')).flatMap((text) => [...text.matchAll(reads)].map((m) => m[1]!)));
    expect([...tokens]).toEqual(expect.arrayContaining(['SITEWARDEN_TARGETS', 'SITEWARDEN_OIDC_']));
    for (const token of tokens) {
      const known = names.has(token) || (token.endsWith('_') && [...names].some((name) => name.startsWith(token)));
      expect(known, `${token} is read in src/ but not declared`).toBe(true);
    }
  });
});

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [readFileSync(path, 'utf8')] : [];
  });
}
