import { createReadStream, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createDirectoryBackend, deleteBlobs, readBlob, type BlobBackend } from '../blobs/blob-backend.js';

const SUFFIX = '.html.gz';

/** A file's bytes, its stream opened only when read: a missing file is the reader's error, not the process's. */
async function* chunksOf(path: string): AsyncGenerator<Buffer> {
  for await (const chunk of createReadStream(path)) yield chunk as Buffer;
}

/**
 * Full Lighthouse reports, gzip HTML, one blob per audit, `<siteId>/<auditId>.html.gz` in `blobs`
 * (DATA_DIR/performance/reports/ on one machine; a bucket in cluster mode): the database keeps only
 * scores and metrics. An audit's worker writes its report to a scratch file under `workRoot`, beside
 * its Chromium profile; the report becomes the audit's only once `put` has stored every byte.
 */
export function createReportStore({ blobs, workRoot }: { blobs: BlobBackend; workRoot: string }) {
  const keyOf = (siteId: string, auditId: string) => `${siteId}/${auditId}${SUFFIX}`;
  return {
    /** Where each running audit's profiles and work files are (a directory per audit). */
    workRoot,
    workDirOf: (auditId: string) => join(workRoot, auditId),
    /** The file an audit's worker writes its report to, outside its work directory (removed when the worker ends). */
    scratchPathOf: (auditId: string) => join(workRoot, `${auditId}${SUFFIX}`),
    /** At start, before any audit runs: profiles, work files and reports a killed daemon left behind. */
    clearWork: () => rmSync(workRoot, { recursive: true, force: true }),
    /** Stores the report an audit's worker wrote at `scratchPath`, then removes that file; throws when it cannot. */
    async put(siteId: string, auditId: string, scratchPath: string): Promise<{ bytes: number }> {
      try {
        return await blobs.put(keyOf(siteId, auditId), chunksOf(scratchPath));
      } finally {
        rmSync(scratchPath, { force: true });
      }
    },
    async read(siteId: string, auditId: string): Promise<Buffer | undefined> {
      return (await readBlob(blobs, keyOf(siteId, auditId)).catch(() => null)) ?? undefined;
    },
    remove: (siteId: string, auditId: string) => blobs.delete(keyOf(siteId, auditId)),
    /**
     * Removes the reports no kept audit owns (deleted audits and sites, failed or interrupted audits), and
     * any other file among them (a `.partial` an older version left); returns how many.
     */
    async removeOrphans(auditIdsOf: (siteId: string) => Promise<Set<string>>): Promise<number> {
      const known = new Map<string, Set<string>>();
      const orphans = await deleteBlobs(blobs, '', async (key) => {
        const [siteId, file, ...deeper] = key.split('/');
        let ids = siteId === undefined ? undefined : known.get(siteId);
        if (siteId !== undefined && !ids) known.set(siteId, (ids = await auditIdsOf(siteId)));
        return deeper.length === 0 && !!file?.endsWith(SUFFIX) && !!ids?.has(file.slice(0, -SUFFIX.length));
      });
      return orphans.length;
    },
  };
}

export type ReportStore = ReturnType<typeof createReportStore>;

/**
 * Reports in `blobs` (cluster mode: the `reports/` prefix of the cluster's blob store), by default in
 * DATA_DIR/performance/reports/ (one machine); audits' work files in DATA_DIR/performance/work/ either way.
 */
export function reportStoreIn(dataDir: string, blobs?: BlobBackend): ReportStore {
  return createReportStore({
    blobs: blobs ?? createDirectoryBackend(join(dataDir, 'performance', 'reports')),
    workRoot: join(dataDir, 'performance', 'work'),
  });
}
