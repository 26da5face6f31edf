import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { BackupConnector } from '../../src/wordpress/connector-client.js';
import { parseBundle } from '../../src/wordpress/connector-backup-schemas.js';
import { createBackupLimits, DEFAULT_BACKUP_LIMITS } from '../../src/backups/backup-limits.js';
import type { DeclaredFile } from '../../src/backups/backup-scratch.js';
import { forEachConcurrently } from '../../src/backups/concurrency.js';
import { createFileTransfer } from '../../src/backups/file-transfer.js';
import { createFileObjectStore } from '../../src/backups/object-store.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const contentOf = (index: number) => Buffer.from(`file ${index} `.repeat(50 + (index % 7)));

/**
 * A connector answering bundles in the framing the real one parses, in pieces as a socket
 * delivers them, through the receive buffer the transfer gives it.
 */
function bundlingConnector(buffersGiven: Buffer[]): BackupConnector {
  return {
    async bundle(
      paths: string[],
      expectedBytes: number,
      onBytes: (bytes: number) => void,
      receiveInto: (max: number) => Buffer,
    ) {
      const body = Buffer.concat(
        paths.flatMap((path) => {
          const content = contentOf(Number(path.split('-')[1]));
          return [Buffer.from(`${content.length}\n`), content];
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 1));
      const into = receiveInto(expectedBytes + paths.length * 24);
      buffersGiven.push(into);
      for (let at = 0; at < body.length; at += 1000) {
        const piece = body.subarray(at, at + 1000);
        onBytes(piece.length);
        piece.copy(into, at);
      }
      return parseBundle(into.subarray(0, body.length), paths.length);
    },
  } as unknown as BackupConnector;
}

describe('bundle receive buffers', () => {
  it('are reused from bundle to bundle, one per transfer running at once, and every file stored is the one sent', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sitewarden-bundle-buffers-'));
    dirs.push(dir);
    const store = createFileObjectStore({ dir });
    const limits = createBackupLimits(DEFAULT_BACKUP_LIMITS);
    limits.declare(100 * 1024 * 1024);
    const buffersGiven: Buffer[] = [];
    const transfer = createFileTransfer({
      connector: bundlingConnector(buffersGiven),
      store,
      budget: limits.budget,
      onReceived: () => {},
      onStored: () => {},
    });
    const bundles: DeclaredFile[][] = Array.from({ length: 20 }, (_, bundle) =>
      Array.from({ length: 25 }, (_, position) => {
        const index = bundle * 25 + position;
        const content = contentOf(index);
        return {
          seq: index,
          path: `file-${index}`,
          size: content.length,
          mtime: 1_700_000_000,
          sha256: createHash('sha256').update(content).digest('hex'),
        };
      }),
    );
    await forEachConcurrently(bundles, 2, async (entries) => {
      const results = await transfer.bundle(entries);
      for (const [position, entry] of entries.entries()) expect(results[position]?.sha256).toBe(entry.sha256);
    });
    limits.dispose();

    expect(buffersGiven).toHaveLength(20);
    expect(new Set(buffersGiven).size).toBeLessThanOrEqual(2);
    for (const entries of bundles)
      for (const entry of entries) expect(await store.read(entry.sha256)).toEqual(contentOf(entry.seq));
  });
});
