import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isProblem } from '../../../src/shared/errors.js';
import { createDirectoryBackend } from '../../../src/blobs/blob-backend.js';
import { offsiteProblems } from '../../../src/backups/offsite/offsite.errors.js';
import { openRemoteRepository } from '../../../src/backups/offsite/remote-store.js';
import { FRAME_BYTES, openBuffer, sealBuffer } from '../../../src/backups/offsite/sealed-stream.js';
import { createFileObjectStore, objectStoreProblems } from '../../../src/backups/object-store.js';

const sha = (content: Buffer) => createHash('sha256').update(content).digest('hex');

function allFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('sealed objects (AES-256-GCM in frames)', () => {
  const key = randomBytes(32);

  it('opens what it sealed, at every size around a frame boundary', async () => {
    for (const size of [0, 1, FRAME_BYTES - 1, FRAME_BYTES, FRAME_BYTES + 1, 3 * FRAME_BYTES]) {
      const plain = randomBytes(size);
      const sealed = await sealBuffer(key, 'n', plain);
      expect(sealed.includes(plain.subarray(0, 32)) && size >= 32).toBe(false);
      expect((await openBuffer(key, 'n', sealed)).equals(plain)).toBe(true);
    }
  });

  it('refuses a flipped bit, a cut-off last frame, another name and another key', async () => {
    const plain = randomBytes(2 * FRAME_BYTES + 10);
    const sealed = await sealBuffer(key, 'name-a', plain);
    const flipped = Buffer.from(sealed);
    flipped[100]! ^= 1;
    await expect(openBuffer(key, 'name-a', flipped)).rejects.toThrow(/fails authentication at frame 0/);
    // Dropping the whole last frame leaves a frame that was not sealed as the last.
    const cut = sealed.subarray(0, 36 + 2 * (FRAME_BYTES + 16));
    await expect(openBuffer(key, 'name-a', cut)).rejects.toThrow(/fails authentication/);
    await expect(openBuffer(key, 'name-b', sealed)).rejects.toThrow(/fails authentication/);
    await expect(openBuffer(randomBytes(32), 'name-a', sealed)).rejects.toThrow(/fails authentication/);
  });
});

describe('an encrypted offsite repository', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sitewarden-offsite-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const open = (passphrase = 'correct horse', create = true) =>
    openRemoteRepository({ target: 'nas', backend: createDirectoryBackend(dir), passphrase, create });

  it('stores content under keyed names the bucket cannot link to the content, and reads it back checked', async () => {
    const repository = await open();
    const content = Buffer.from('<?php // wp-config.php\n'.repeat(500));
    const result = await repository.store.put(content);
    expect(result).toMatchObject({ hash: sha(content), size: content.length, created: true });
    const files = allFiles(dir).map((path) => path.slice(dir.length + 1));
    const name = repository.nameOf(result.hash);
    expect(files.sort()).toEqual([`data/${name.slice(0, 2)}/${name}`, 'keys/repository']);
    // Neither the content hash nor any plaintext is in the bucket.
    expect(files.some((file) => file.includes(result.hash))).toBe(false);
    for (const path of allFiles(dir)) expect(readFileSync(path).includes('wp-config')).toBe(false);
    expect((await repository.store.read(result.hash)).equals(content)).toBe(true);
    expect(await repository.store.put(content)).toMatchObject({ created: false, storedBytes: 0 });

    // Another repository (another key) names the same content differently.
    const other = await openRemoteRepository({
      target: 'other',
      backend: createDirectoryBackend(mkdtempSync(join(tmpdir(), 'sitewarden-offsite-'))),
      passphrase: 'correct horse',
      create: true,
    });
    expect(other.nameOf(result.hash)).not.toBe(repository.nameOf(result.hash));
  });

  it('opens again with the same passphrase; a wrong one is a clear problem naming the target', async () => {
    const first = await open();
    const { hash } = await first.store.put(Buffer.from('kept'));
    const again = await open('correct horse', false);
    expect((await again.store.read(hash)).toString()).toBe('kept');
    const wrong = await open('Tr0ub4dor&3', false).catch((error: unknown) => error);
    expect(isProblem(wrong, offsiteProblems.wrongPassphrase)).toBe(true);
    expect((wrong as Error).message).toMatch(/target nas: the passphrase does not open/);
  });

  it('streams content it is given with its hash, and stores nothing when the bytes hash to something else', async () => {
    const repository = await open();
    const content = randomBytes(3 * 1024 * 1024);
    await repository.store.put(Readable.from([content]), sha(content));
    expect((await repository.store.read(sha(content))).equals(content)).toBe(true);
    const liar = randomBytes(1000);
    const error = await repository.store.put(Readable.from([liar]), sha(Buffer.from('other'))).catch((e: unknown) => e);
    expect(isProblem(error, objectStoreProblems.corrupt)).toBe(true);
    expect(await repository.store.has(sha(Buffer.from('other')))).toBe(false);
    expect(allFiles(dir).filter((path) => path.includes('/.tmp/'))).toEqual([]);
  });

  it('keeps a bad object’s error for a reader that comes late, never throwing it at the process', async () => {
    const repository = await open();
    const content = randomBytes(5_000);
    const { hash } = await repository.store.put(content);
    const path = join(dir, 'data', repository.nameOf(hash).slice(0, 2), repository.nameOf(hash));
    const sealed = readFileSync(path);
    sealed[60]! ^= 1;
    writeFileSync(path, sealed);
    const local = createFileObjectStore({ dir: join(dir, 'local') });
    // Opened, then read only after the failure happened (as a put does after awaiting its own checks).
    const remote = repository.store.get(hash);
    const missing = local.get(sha(Buffer.from('never stored')));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await expect(local.put(remote, hash)).rejects.toThrow(/fails authentication at frame 0/);
    expect(await local.has(hash)).toBe(false);
    await expect(
      (async () => {
        for await (const _chunk of missing);
      })(),
    ).rejects.toThrow(/ENOENT/);
  });

  it('names the object when its blob was flipped, replaced by another one, or removed', async () => {
    const repository = await open();
    const a = await repository.store.put(Buffer.from('object a'));
    const b = await repository.store.put(Buffer.from('object b'));
    const c = await repository.store.put(Buffer.from('object c'));
    const pathOf = (hash: string) => join(dir, 'data', repository.nameOf(hash).slice(0, 2), repository.nameOf(hash));
    const bytes = readFileSync(pathOf(a.hash));
    bytes[bytes.length - 3]! ^= 0x10;
    writeFileSync(pathOf(a.hash), bytes);
    writeFileSync(pathOf(b.hash), readFileSync(pathOf(c.hash)));
    rmSync(pathOf(c.hash));
    await expect(repository.store.read(a.hash)).rejects.toThrow(new RegExp(`object ${a.hash} .*fails authentication`));
    await expect(repository.store.read(b.hash)).rejects.toThrow(new RegExp(`object ${b.hash} .*fails authentication`));
    await expect(repository.store.read(c.hash)).rejects.toThrow(new RegExp(`object ${c.hash} .* is missing`));
  });
});
