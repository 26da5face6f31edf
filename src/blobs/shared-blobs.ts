import { join } from 'node:path';
import type { BlobBackend } from './blob-backend.js';
import { openStoreLocation, type StoreLocation } from './store-location.js';

/**
 * Cluster mode's blob store (issue 34, docs/cluster.md): one backend for SITEWARDEN_BLOB_*, opened at its first
 * use (the S3 client is loaded then, not while the services are built), and a view of it for each kind of blob
 * under its prefix (`reports/`, `screenshots/`, `backups/`), so that any process serves what any worker wrote.
 */
export function createSharedBlobs(location: StoreLocation): { under(prefix: string): BlobBackend } {
  let opened: Promise<BlobBackend> | undefined;
  const backend = () => {
    if (!opened) {
      opened = openStoreLocation(location);
      opened.catch(() => (opened = undefined));
    }
    return opened;
  };
  const base = location.type === 's3' ? `s3://${location.s3.bucket}/${location.s3.prefix}` : `${location.path}/`;
  return {
    under(prefix) {
      if (!/^[a-z-]+\/$/.test(prefix)) throw new Error(`not a blob prefix: ${prefix}`);
      return {
        location: location.type === 's3' ? `${base}${prefix}` : join(location.path, prefix),
        put: async (key, body, options) => (await backend()).put(`${prefix}${key}`, body, options),
        get: async (key) => (await backend()).get(`${prefix}${key}`),
        size: async (key) => (await backend()).size(`${prefix}${key}`),
        delete: async (key) => (await backend()).delete(`${prefix}${key}`),
        async *list(within) {
          for await (const item of (await backend()).list(`${prefix}${within}`))
            yield { ...item, key: item.key.slice(prefix.length) };
        },
        // Unfinished writes are the whole store's (a directory's `.tmp/`, a bucket's multipart uploads), whoever left them.
        cleanUnfinished: async (before) => (await backend()).cleanUnfinished(before),
      };
    },
  };
}
