import { readBlob, type BlobBackend } from './blob-backend.js';

/**
 * Every blob of `source` under the same key in `target`, each read back and compared byte for byte before the
 * next: `sitewarden cluster import` moves a data directory's audit reports and screenshots into the cluster's blob
 * store with it (issue 34), the keys those rows name unchanged. One blob in memory at a time (a report or a screenshot,
 * a few megabytes); throws at the first that cannot be written or does not read back.
 */
export async function copyBlobs(source: BlobBackend, target: BlobBackend): Promise<{ count: number; bytes: number }> {
  let count = 0;
  let bytes = 0;
  for await (const { key } of source.list('')) {
    const content = await readBlob(source, key);
    if (!content) throw new Error(`${source.location}: ${key} went away while it was copied`);
    await target.put(key, [content], { bytes: content.length });
    const stored = await readBlob(target, key);
    if (!stored?.equals(content)) throw new Error(`${target.location}: ${key} does not read back as it was written`);
    count++;
    bytes += content.length;
  }
  return { count, bytes };
}
