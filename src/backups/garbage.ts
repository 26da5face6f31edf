import { openHashScratch } from './hash-scratch.js';
import { eachReferencedObject } from './manifest.js';
import type { ObjectStore } from './object-store.js';

/**
 * Deletes every object of the store that none of `manifests` (the completed backups' manifests)
 * references. What is referenced is remembered on disk (src/backups/hash-scratch.ts), not in a
 * set in memory: it counts every distinct file of every backup kept. The caller holds the store
 * exclusively.
 */
export async function collectGarbage(store: ObjectStore, manifests: Iterable<string>): Promise<number> {
  const referenced = openHashScratch();
  try {
    for (const manifestHash of manifests) {
      referenced.add(manifestHash);
      for await (const hash of eachReferencedObject(store, manifestHash)) referenced.add(hash);
    }
    let deleted = 0;
    for await (const hash of store.list()) {
      if (referenced.has(hash)) continue;
      await store.delete(hash);
      deleted++;
    }
    return deleted;
  } finally {
    referenced.close();
  }
}
