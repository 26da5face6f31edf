import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseBundle } from '../../src/wordpress/connector-backup-schemas.js';
import type { BackupRow } from '../../src/backups/backups.table.js';
import { createStoreLock } from '../../src/backups/concurrency.js';
import {
  checkManifestFiles,
  FILES_PER_PART,
  isSafeRelativePath,
  openManifest,
  pairByPath,
  parseManifest,
  readManifest,
  referencedObjects,
  writeManifest,
  type Manifest,
} from '../../src/backups/manifest.js';
import { createFileObjectStore, type FileObjectStore } from '../../src/backups/object-store.js';
import { verifyBackup } from '../../src/backups/verify.js';

const sha = (content: Buffer | string) => createHash('sha256').update(content).digest('hex');

describe('the content-addressed object store', () => {
  let dir: string;
  let store: FileObjectStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sitewarden-store-'));
    store = createFileObjectStore({ dir });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('stores content once, compressed, under the SHA-256 of the uncompressed content', async () => {
    const content = Buffer.from('hello '.repeat(10_000));
    const first = await store.put(content);
    expect(first).toMatchObject({ hash: sha(content), size: content.length, created: true });
    expect(first.storedBytes).toBeLessThan(content.length / 10);
    expect(existsSync(join(dir, 'objects', first.hash.slice(0, 2), first.hash))).toBe(true);
    expect(await store.put(Readable.from([content.subarray(0, 5), content.subarray(5)]))).toMatchObject({
      hash: first.hash,
      created: false,
      storedBytes: 0,
    });
    expect((await store.read(first.hash)).equals(content)).toBe(true);
    expect(await store.has(first.hash)).toBe(true);
    const listed = [];
    for await (const hash of store.list()) listed.push(hash);
    expect(listed).toEqual([first.hash]);
  });

  it('tells, without reading the object, whether it still holds the size of content a backup would reuse', async () => {
    const content = randomBytes(300_000);
    const { hash } = await store.put(content);
    expect(await store.holds(hash, content.length)).toBe(true);
    expect(await store.holds(hash, content.length - 1)).toBe(false);
    const empty = await store.put(Buffer.alloc(0));
    expect(await store.holds(empty.hash, 0)).toBe(true);
    // Cut short on disk (a full disk, a bad copy): no longer reused, though it still exists.
    const path = join(dir, 'objects', hash.slice(0, 2), hash);
    writeFileSync(path, readFileSync(path).subarray(0, 1000));
    expect(await store.has(hash)).toBe(true);
    expect(await store.holds(hash, content.length)).toBe(false);
    expect(await store.holds('0'.repeat(64), 0)).toBe(false);
  });

  it('refuses content that does not match the expected hash, leaving nothing under any name', async () => {
    const wrong = sha('something else');
    await expect(store.put(Buffer.from('content'), wrong)).rejects.toThrow(/not the expected/);
    expect(await store.has(wrong)).toBe(false);
    expect(await store.has(sha('content'))).toBe(false);
    expect(readdirSync(join(dir, 'tmp'))).toEqual([]);
  });

  it('notices an object whose bytes were damaged on disk', async () => {
    const { hash } = await store.put(Buffer.from('precious'));
    writeFileSync(join(dir, 'objects', hash.slice(0, 2), hash), gzipSync('tampered'));
    await expect(store.read(hash)).rejects.toThrow(/hashing to/);
    writeFileSync(join(dir, 'objects', hash.slice(0, 2), hash), 'not gzip at all');
    await expect(store.read(hash)).rejects.toThrow(/cannot be decompressed/);
  });

  it('verifies a backup object by object, and reports a damaged one', async () => {
    const big = randomBytes(3000);
    const [a, b] = [big.subarray(0, 1000), big.subarray(1000)];
    const chunkA = (await store.put(a)).hash;
    const chunkB = (await store.put(b)).hash;
    const sql = Buffer.from('INSERT INTO `wp_t` (`a`) VALUES\n(1);\n');
    const batch = (await store.put(sql)).hash;
    const manifest: Manifest = {
      format: 1,
      siteUrl: 'http://127.0.0.1',
      createdAt: new Date().toISOString(),
      files: [{ path: 'wp-content/big.bin', size: 3000, mtime: 0, sha256: sha(big), chunks: [chunkA, chunkB] }],
      tables: [
        {
          name: 'wp_t',
          create: 'CREATE TABLE `wp_t` (a int)',
          rows: 1,
          primaryKey: [],
          checksum: '1',
          batches: [batch],
        },
      ],
    };
    const manifestHash = (await store.put(Buffer.from(JSON.stringify(manifest)))).hash;
    const backup = { id: 'bkp_1', status: 'completed', manifestHash } as BackupRow;
    expect(await verifyBackup({ store, backup })).toMatchObject({
      ok: true,
      objectsChecked: 4,
      bytesChecked: 3000 + sql.length,
    });

    writeFileSync(join(dir, 'objects', chunkB.slice(0, 2), chunkB), gzipSync(Buffer.alloc(2000)));
    const damaged = await verifyBackup({ store, backup });
    expect(damaged.ok).toBe(false);
    expect(damaged.problems).toEqual([expect.stringContaining(chunkB)]);
    expect((await verifyBackup({ store, backup: { ...backup, status: 'failed', manifestHash: null } })).ok).toBe(false);
  });

  it('fails verification of a backup whose file content is not the size and hash it records', async () => {
    const content = Buffer.from('<html>critical error</html>');
    const chunk = (await store.put(content)).hash;
    const manifest: Manifest = {
      format: 1,
      siteUrl: 'http://127.0.0.1',
      createdAt: new Date().toISOString(),
      // Recorded as the 3-byte file the site listed, holding the bytes it sent instead.
      files: [{ path: 'wp-content/index.php', size: 3, mtime: 0, sha256: chunk, chunks: [chunk] }],
      tables: [],
    };
    const manifestHash = (await store.put(Buffer.from(JSON.stringify(manifest)))).hash;
    const result = await verifyBackup({
      store,
      backup: { id: 'bkp_2', status: 'completed', manifestHash } as BackupRow,
    });
    expect(result.ok).toBe(false);
    expect(result.problems).toEqual([expect.stringContaining('wp-content/index.php: its content is 27 bytes')]);
  });

  it('writes a manifest’s file entries in parts of bounded size, and reads them back in order', async () => {
    const chunk = (await store.put(Buffer.from('x'))).hash;
    const files = Array.from({ length: FILES_PER_PART * 2 + 1 }, (_, i) => ({
      path: `f/${String(i).padStart(6, '0')}`,
      size: 1,
      mtime: i,
      sha256: chunk,
      chunks: [chunk],
    }));
    const { hash } = await writeManifest(
      store,
      { siteUrl: 'http://127.0.0.1', createdAt: new Date().toISOString(), tables: [] },
      files,
    );
    const opened = await openManifest(store, hash);
    expect(opened.fileParts).toHaveLength(3);
    expect((await readManifest(store, hash)).files).toEqual(files);
    expect(await referencedObjects(store, hash)).toEqual(new Set([...opened.fileParts, chunk]));
    expect(
      await verifyBackup({ store, backup: { id: 'bkp_3', status: 'completed', manifestHash: hash } as BackupRow }),
    ).toMatchObject({ ok: true, problems: [] });
  });

  it('clears temporary files a killed process left', async () => {
    await store.put(Buffer.from('x'));
    writeFileSync(join(dir, 'tmp', 'half.tmp'), 'partial');
    await store.cleanTemporary();
    expect(existsSync(join(dir, 'tmp', 'half.tmp'))).toBe(false);
  });
});

describe('manifests are not trusted', () => {
  it('accepts only relative paths inside the root', () => {
    for (const path of ['index.php', 'wp-content/uploads/a b.jpg', '.htaccess', 'wp-content/..hidden'])
      expect(isSafeRelativePath(path), path).toBe(true);
    for (const path of [
      '',
      '/etc/passwd',
      '../wp-config.php',
      'wp-content/../../x',
      'a//b',
      './a',
      'a/.',
      'a\\..\\b',
      'C:/x',
      'a\0b',
    ])
      expect(isSafeRelativePath(path), path).toBe(false);
  });

  it('refuses a whole manifest holding one path that escapes the root', () => {
    const manifest = {
      format: 1,
      siteUrl: 'x',
      createdAt: 'x',
      tables: [],
      files: [{ path: '../../evil.php', size: 1, mtime: 0, sha256: sha('a'), chunks: [sha('a')] }],
    };
    expect(() => parseManifest(JSON.stringify(manifest))).toThrow(/unsafe path/);
  });
});

describe('manifests are walked in path order, side by side (restore and download hold neither whole)', () => {
  let dir: string;
  let store: FileObjectStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sitewarden-store-'));
    store = createFileObjectStore({ dir });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const entry = (path: string, content = 'x') => ({
    path,
    size: content.length,
    mtime: 0,
    sha256: sha(content),
    chunks: [sha(content)],
  });
  const paths = async (files: AsyncIterable<{ path: string }>) => {
    const seen: string[] = [];
    for await (const file of files) seen.push(file.path);
    return seen;
  };

  it('gives a format 1 manifest’s entries in byte order of their paths, a repeated path once with its last entry', async () => {
    const manifest: Manifest = {
      format: 1,
      siteUrl: 'x',
      createdAt: 'x',
      tables: [],
      files: [entry('b'), entry('a.txt'), entry('a-z', 'first'), entry('é'), entry('a-z', 'last')],
    };
    const opened = await openManifest(store, (await store.put(Buffer.from(JSON.stringify(manifest)))).hash);
    const files = [];
    for await (const file of opened.files()) files.push(file);
    expect(files.map((file) => file.path)).toEqual(['a-z', 'a.txt', 'b', 'é']);
    expect(files[0]!.sha256).toBe(sha('last'));
  });

  it('refuses a format 2 manifest whose entries are out of path order, unsafe or malformed, naming the path', async () => {
    const manifestOf = async (line: object) => {
      const part = await store.put(Buffer.from(`${JSON.stringify(entry('a'))}\n${JSON.stringify(line)}\n`));
      const header = { format: 2, siteUrl: 'x', createdAt: 'x', tables: [], fileCount: 2, fileParts: [part.hash] };
      return openManifest(store, (await store.put(Buffer.from(JSON.stringify(header)))).hash);
    };
    await expect(checkManifestFiles(await manifestOf(entry('../evil.php')))).rejects.toMatchObject({
      problem: { name: 'backup-unsafe-path' },
    });
    await expect(checkManifestFiles(await manifestOf({ ...entry('b'), size: -1 }))).rejects.toThrow(
      /malformed at size/,
    );
    await expect(checkManifestFiles(await manifestOf({ ...entry('b'), chunks: ['x'] }))).rejects.toThrow(
      /malformed at chunks/,
    );

    const { hash } = await writeManifest(store, { siteUrl: 'x', createdAt: 'x', tables: [] }, [
      entry('a'),
      entry('c'),
      entry('b'),
    ]);
    const opened = await openManifest(store, hash);
    await expect(paths(opened.files())).rejects.toThrow(/"b" after "c"/);
    await expect(checkManifestFiles(opened)).rejects.toMatchObject({
      problem: { name: 'backup-manifest-malformed' },
    });
  });

  it('pairs two manifests’ entries by path: each path once, from either side or both', async () => {
    async function* of(...names: string[]) {
      for (const name of names) yield entry(name);
    }
    const pairs = [];
    for await (const [left, right] of pairByPath(of('a', 'b', 'd', 'é'), of('b', 'c', 'é', 'z')))
      pairs.push([left?.path ?? null, right?.path ?? null]);
    expect(pairs).toEqual([
      ['a', null],
      ['b', 'b'],
      [null, 'c'],
      ['d', null],
      ['é', 'é'],
      [null, 'z'],
    ]);
  });
});

describe('the connector’s file bundles', () => {
  it('reads each file, a gone one, and refuses a cut-short answer', () => {
    const body = Buffer.concat([Buffer.from('3\nabc-1\n0\n-2\n2\n\n\n')]);
    expect(parseBundle(body, 5).map((file) => file?.toString() ?? null)).toEqual(['abc', null, '', null, '\n\n']);
    expect(() => parseBundle(Buffer.from('5\nabc'), 1)).toThrow(/cut short/);
    expect(() => parseBundle(Buffer.from('<html>'), 1)).toThrow(/malformed/);
  });
});

describe('the store lock', () => {
  it('lets garbage collection run only when no backup is using the store', async () => {
    const lock = createStoreLock();
    const order: string[] = [];
    let finishBackup!: () => void;
    const backup = lock.shared(async () => {
      order.push('backup start');
      await new Promise<void>((resolve) => (finishBackup = resolve));
      order.push('backup end');
    });
    const gc = lock.exclusive(async () => void order.push('gc'));
    const later = lock.shared(async () => void order.push('later backup'));
    await new Promise((resolve) => setTimeout(resolve, 10));
    finishBackup();
    await Promise.all([backup, gc, later]);
    expect(order).toEqual(['backup start', 'backup end', 'gc', 'later backup']);
  });
});
