import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDirectoryBackend, type BlobBackend } from '../../src/blobs/blob-backend.js';

describe('blobs in a directory', () => {
  let dir: string;
  let blobs: BlobBackend;
  const keys = async (prefix = '') => {
    const found: string[] = [];
    for await (const { key } of blobs.list(prefix)) found.push(key);
    return found;
  };
  const read = async (key: string) => {
    const stream = await blobs.get(key);
    return stream && (await buffer(stream)).toString();
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sitewarden-blobs-'));
    blobs = createDirectoryBackend(dir);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('removes the folders a key named with their last blob, as a bucket leaves none, and never its own', async () => {
    await blobs.put('saf_1/before-0.png', [Buffer.from('a')]);
    await blobs.put('saf_1/after-0.png', [Buffer.from('b')]);
    await blobs.put('site_1/deep/aud_1.html.gz', [Buffer.from('c')]);
    expect(await keys()).toEqual(['saf_1/after-0.png', 'saf_1/before-0.png', 'site_1/deep/aud_1.html.gz']);

    await blobs.delete('saf_1/before-0.png');
    expect(existsSync(join(dir, 'saf_1'))).toBe(true);
    await blobs.delete('saf_1/after-0.png');
    await blobs.delete('site_1/deep/aud_1.html.gz');
    expect(readdirSync(dir).filter((name) => name !== '.tmp')).toEqual([]);
    expect(existsSync(dir)).toBe(true);

    // A folder removed as empty is made again by the next write into it.
    await blobs.put('saf_1/diff-0.png', [Buffer.from('d')]);
    expect(await read('saf_1/diff-0.png')).toBe('d');
    expect(await read('saf_1/before-0.png')).toBeNull();
  });

  it('writes and deletes in one folder at the same time without losing a write', async () => {
    // In each folder, a delete emptying it races a put into it: every put still lands. A folder per round, as a
    // kept blob leaves its folder never empty again. Node's recursive mkdir lost about one such race in fifty (a
    // delete removed the folder between its two looks: ENOENT), the rename after it more.
    const rounds = Array.from({ length: 300 }, (_, index) => index);
    await Promise.all(
      rounds.map(async (index) => {
        await blobs.put(`saf_${index}/gone.png`, [Buffer.from('x')]);
        await Promise.all([
          blobs.delete(`saf_${index}/gone.png`),
          blobs.put(`saf_${index}/kept.png`, [Buffer.from('y')]),
        ]);
      }),
    );
    expect(await keys()).toEqual(rounds.map((index) => `saf_${index}/kept.png`).sort());
  });

  it('refuses a key that would leave its directory', async () => {
    for (const key of ['../outside', 'a/../../b', '/absolute', 'a//b', 'spaces are not keys'])
      await expect(blobs.put(key, [Buffer.from('z')])).rejects.toThrow(/not a blob key/);
  });
});
