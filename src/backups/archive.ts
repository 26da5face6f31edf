import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import type { Manifest } from './manifest.js';
import type { ObjectStore } from './object-store.js';
import { tarEnd, tarFileHeader, tarPadding } from './tar.js';

/**
 * A backup as one standard archive, so nobody is locked in: a tar.gz holding the site's files
 * under `files/` and `database.sql`, an SQL dump any MySQL or MariaDB client imports. Streamed
 * object by object; the dump is assembled in a temporary file first (tar needs its size up front).
 */
export function backupArchive({ store, manifest, tmpDir }: { store: ObjectStore; manifest: Manifest; tmpDir: string }): Readable {
  async function* entries(): AsyncGenerator<Buffer> {
    const created = Math.floor(Date.parse(manifest.createdAt) / 1000) || 0;
    await mkdir(tmpDir, { recursive: true, mode: 0o700 });
    const dumpPath = join(tmpDir, `dump-${randomBytes(8).toString('hex')}.sql`);
    try {
      const dump = createWriteStream(dumpPath, { mode: 0o600 });
      const write = async (chunk: Buffer | string) => {
        if (!dump.write(chunk)) await once(dump, 'drain');
      };
      await write(`-- Sitewarden backup of ${manifest.siteUrl} taken ${manifest.createdAt}\nSET NAMES utf8mb4;\nSET FOREIGN_KEY_CHECKS = 0;\n`);
      for (const table of manifest.tables) {
        await write(`\nDROP TABLE IF EXISTS \`${table.name}\`;\n${table.create};\n`);
        for (const batch of table.batches) for await (const chunk of store.get(batch)) await write(chunk as Buffer);
      }
      await write('SET FOREIGN_KEY_CHECKS = 1;\n');
      dump.end();
      await once(dump, 'close');
      const dumpSize = (await stat(dumpPath)).size;
      yield tarFileHeader('database.sql', dumpSize, created);
      for await (const chunk of createReadStream(dumpPath)) yield chunk as Buffer;
      yield tarPadding(dumpSize);
    } finally {
      await rm(dumpPath, { force: true });
    }
    for (const file of manifest.files) {
      yield tarFileHeader(`files/${file.path}`, file.size, file.mtime);
      for (const chunk of file.chunks) for await (const bytes of store.get(chunk)) yield bytes as Buffer;
      yield tarPadding(file.size);
    }
    yield tarEnd();
  }
  const gzip = createGzip();
  const source = Readable.from(entries());
  source.on('error', (error) => gzip.destroy(error));
  return source.pipe(gzip);
}
