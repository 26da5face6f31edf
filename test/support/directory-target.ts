import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RemoteRepository } from '../../src/backups/offsite/remote-store.js';

/** Where a directory target (createDirectoryTargetApp's `nas`) keeps an object: `data/<two characters>/<name>`. */
export function directoryBlobPath(targetDir: string, repository: RemoteRepository, hash: string): string {
  const name = repository.nameOf(hash);
  return join(targetDir, 'data', name.slice(0, 2), name);
}

/** Damages a stored object as a disk could: one bit flipped inside its sealed content, its length unchanged. */
export function flipBlobBit(path: string): void {
  const bytes = readFileSync(path);
  bytes[bytes.length - 20]! ^= 0x01;
  writeFileSync(path, bytes);
}
