import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCommand } from '../processes.js';

export type PackageType = 'plugin' | 'theme';

/** One downloadable version of a plugin or theme, as the directory knows it. */
export interface DirectoryPackage {
  type: PackageType;
  slug: string;
  version: string;
  /** File headers (Plugin Name / Theme Name, Version, Requires PHP, ...). */
  headers: Record<string, string>;
  zipPath: string;
}

/** Slug => its versions, oldest first. */
export type Catalog = Record<PackageType, Map<string, DirectoryPackage[]>>;

/**
 * An installed package re-published with a higher version, so tests can update
 * something WordPress itself ships (e.g. a default theme).
 */
export interface ForkedPackage {
  type: PackageType;
  slug: string;
  from: string;
  version: string;
}

/**
 * Zips every fixture under `<fixturesDir>/{plugins,themes}/<slug>/<version>/<slug>/`
 * plus the forks, into `zipDir`.
 */
export async function buildCatalog(deps: {
  fixturesDir: string;
  zipDir: string;
  forks: ForkedPackage[];
}): Promise<Catalog> {
  mkdirSync(deps.zipDir, { recursive: true });
  const jobs: Promise<DirectoryPackage>[] = [];
  for (const type of ['plugin', 'theme'] as const) {
    const typeDir = join(deps.fixturesDir, `${type}s`);
    if (!existsSync(typeDir)) continue;
    for (const slug of readdirSync(typeDir)) {
      for (const version of readdirSync(join(typeDir, slug))) {
        jobs.push(packageFromDir({ type, slug, parentDir: join(typeDir, slug, version), zipDir: deps.zipDir }));
      }
    }
  }
  for (const fork of deps.forks) jobs.push(packageFromFork(fork, deps.zipDir));

  const catalog: Catalog = { plugin: new Map(), theme: new Map() };
  for (const pkg of await Promise.all(jobs)) {
    const versions = catalog[pkg.type].get(pkg.slug) ?? [];
    versions.push(pkg);
    versions.sort((a, b) => compareVersions(a.version, b.version));
    catalog[pkg.type].set(pkg.slug, versions);
  }
  return catalog;
}

export function newestVersion(catalog: Catalog, type: PackageType, slug: string): DirectoryPackage | undefined {
  return catalog[type].get(slug)?.at(-1);
}

/** Numeric dotted versions are all the fixtures use; enough for ordering them. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map((part) => Number.parseInt(part, 10) || 0);
  const pb = b.split('.').map((part) => Number.parseInt(part, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const diff = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}

async function packageFromDir(options: {
  type: PackageType;
  slug: string;
  parentDir: string;
  zipDir: string;
}): Promise<DirectoryPackage> {
  const { type, slug, parentDir } = options;
  const headers = readHeaders(type, join(parentDir, slug), slug);
  const version = headers['Version'];
  if (!version) throw new Error(`${join(parentDir, slug)} has no Version header`);
  // The folder name is only a convention; the header is what WordPress will see.
  if (!parentDir.endsWith(`/${version}`)) throw new Error(`${parentDir}: header says Version ${version}`);
  const zipPath = join(options.zipDir, `${type}-${slug}.${version}.zip`);
  // -X: no extra attributes, so the archive depends only on the files.
  await runCommand('zip', ['-qrX', zipPath, slug], { cwd: parentDir });
  return { type, slug, version, headers, zipPath };
}

async function packageFromFork(fork: ForkedPackage, zipDir: string): Promise<DirectoryPackage> {
  const parentDir = join(zipDir, 'forks', fork.type, fork.slug, fork.version);
  cpSync(fork.from, join(parentDir, fork.slug), { recursive: true, dereference: true });
  const mainFile = join(parentDir, fork.slug, fork.type === 'theme' ? 'style.css' : `${fork.slug}.php`);
  const original = readFileSync(mainFile, 'utf8');
  const bumped = original.replace(/^([ \t/*#@]*Version:[ \t]*).*$/m, `$1${fork.version}`);
  if (bumped === original) throw new Error(`${mainFile} has no Version header to bump`);
  writeFileSync(mainFile, bumped);
  return packageFromDir({ type: fork.type, slug: fork.slug, parentDir, zipDir });
}

/** Same idea as WordPress's get_file_data(): `Name: value` lines in the first 8 KiB. */
function readHeaders(type: PackageType, packageDir: string, slug: string): Record<string, string> {
  const candidates =
    type === 'theme' ? ['style.css'] : [`${slug}.php`, ...readdirSync(packageDir).filter((f) => f.endsWith('.php'))];
  for (const file of candidates) {
    const path = join(packageDir, file);
    if (!existsSync(path)) continue;
    const head = readFileSync(path, 'utf8').slice(0, 8192);
    const headers: Record<string, string> = {};
    for (const match of head.matchAll(/^[ \t/*#@]*([A-Za-z][A-Za-z ]*?):[ \t]*(.*?)\s*(?:\*\/)?$/gm)) {
      const [, name, value] = match;
      if (name && value !== undefined && !(name in headers)) headers[name] = value.trim();
    }
    if (headers[type === 'theme' ? 'Theme Name' : 'Plugin Name']) return headers;
  }
  throw new Error(`no ${type} header found in ${packageDir}`);
}
