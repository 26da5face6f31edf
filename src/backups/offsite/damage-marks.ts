import type { RemoteRepository } from './remote-store.js';

/**
 * Objects a verify found damaged in a repository (present, but failing authentication or their
 * hash), marked in the bucket itself as empty blobs `damaged/<keyed name>`: the next copy of a
 * backup that references one sends it again as if it were missing (replicate.ts), and a repair
 * does at once (verify-jobs.ts). In the bucket rather than in this daemon's database, so the mark
 * outlives a restart and is seen by any daemon copying to it; the keyed name says no more than
 * the data blob's own name does.
 */
const DAMAGED_PREFIX = 'damaged/';

export async function markDamaged(repository: RemoteRepository, hashes: Iterable<string>): Promise<void> {
  for (const hash of hashes)
    await repository.backend.put(`${DAMAGED_PREFIX}${repository.nameOf(hash)}`, [], { bytes: 0 });
}

/** The keyed names marked damaged. */
export async function damagedNames(repository: RemoteRepository): Promise<Set<string>> {
  const names = new Set<string>();
  for await (const { key } of repository.backend.list(DAMAGED_PREFIX)) {
    const name = key.slice(DAMAGED_PREFIX.length);
    if (/^[0-9a-f]{64}$/.test(name)) names.add(name);
  }
  return names;
}

/** Once the object under a keyed name was sent again whole. */
export async function clearDamaged(repository: RemoteRepository, names: Iterable<string>): Promise<void> {
  for (const name of names) await repository.backend.delete(`${DAMAGED_PREFIX}${name}`);
}
