import { existsSync, rmSync } from 'node:fs';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Full Lighthouse reports, gzip HTML, one file per audit under DATA_DIR/performance/reports/<siteId>/
 * (the database keeps only scores and metrics). Profiles of running audits sit beside them.
 */
export function createReportStore({ dataDir }: { dataDir: string }) {
  const root = join(dataDir, 'performance');
  const reportsDir = join(root, 'reports');
  const pathOf = (siteId: string, auditId: string) => join(reportsDir, siteId, `${auditId}.html.gz`);
  const workRoot = join(root, 'work');
  return {
    pathOf,
    /** Where each running audit's profiles and work files are (a directory per audit). */
    workRoot,
    workDirOf: (auditId: string) => join(workRoot, auditId),
    /** At start, before any audit runs: profiles and work files a killed daemon left behind. */
    clearWork: () => rmSync(workRoot, { recursive: true, force: true }),
    read: async (siteId: string, auditId: string): Promise<Buffer | undefined> =>
      readFile(pathOf(siteId, auditId)).catch(() => undefined),
    remove: (siteId: string, auditId: string) => rm(pathOf(siteId, auditId), { force: true }),
    /** Removes report files (and `.partial` ones) no kept audit owns: deleted audits and sites, failed or interrupted audits; returns how many. */
    async removeOrphans(auditIdsOf: (siteId: string) => Set<string>): Promise<number> {
      if (!existsSync(reportsDir)) return 0;
      let removed = 0;
      for (const siteId of await readdir(reportsDir)) {
        const siteDir = join(reportsDir, siteId);
        if (!(await stat(siteDir)).isDirectory()) continue;
        const known = auditIdsOf(siteId);
        for (const file of await readdir(siteDir)) {
          if (file.endsWith('.html.gz') && known.has(file.slice(0, -'.html.gz'.length))) continue;
          if (file.endsWith('.partial') && known.has(file.slice(0, -'.html.gz.partial'.length))) continue;
          await rm(join(siteDir, file), { force: true });
          removed++;
        }
        if (known.size === 0) await rm(siteDir, { recursive: true, force: true });
      }
      return removed;
    },
  };
}

export type ReportStore = ReturnType<typeof createReportStore>;
