// What is read of safe updates: one report, a list of a site's, a screenshot of a report, and the
// clean-up of screenshots left by safe updates no longer recorded.
import type { SiteAccess } from '../wordpress/site-access.js';
import { safeUpdatesProblems } from './safe-updates.errors.js';
import type { SafeUpdatesRepository } from './safe-updates.repository.js';
import { safeUpdateView } from './safe-updates.schemas.js';
import { deleteBlobs } from '../blobs/blob-backend.js';
import { readScreenshot, type ScreenshotStore } from './visual-check.js';

const SCREENSHOT_NAME = /^(before|after|diff)-[0-9]{1,2}\.png$/;

export function createSafeUpdateQueries({
  repository,
  access,
  screenshots,
}: {
  repository: SafeUpdatesRepository;
  access: SiteAccess;
  screenshots: ScreenshotStore;
}) {
  async function get(siteId: string, id: string) {
    await access.connected(siteId);
    const row = await repository.findForSite(siteId, id);
    if (!row) throw safeUpdatesProblems.notFound.create(`site ${siteId} has no safe update ${id}`);
    return safeUpdateView(row);
  }

  return {
    get,

    /** A PNG of the report (`before-0.png`, `after-0.png`, `diff-0.png`, …). */
    async screenshot(siteId: string, id: string, name: string): Promise<Buffer> {
      await get(siteId, id);
      // Only the names a report lists: never a path out of the safe update's folder.
      const png = SCREENSHOT_NAME.test(name) ? await readScreenshot(screenshots, id, name) : null;
      if (!png) throw safeUpdatesProblems.screenshotNotFound.create(`safe update ${id} has no ${name}`);
      return png;
    },

    async list(siteId: string, limit = 50) {
      await access.connected(siteId);
      return (await repository.listForSite(siteId, limit)).map(safeUpdateView);
    },

    /** Removes the screenshots of safe updates no longer recorded (their site was removed); of how many. */
    async removeOrphanScreenshots(): Promise<number> {
      // Each safe update's folder read once: its row's answer, awaited by each of its screenshots.
      const recorded = new Map<string, Promise<boolean>>();
      const idOf = (key: string) => key.split('/')[0]!;
      const removed = await deleteBlobs(screenshots.blobs, '', (key) => {
        const id = idOf(key);
        let kept = recorded.get(id);
        if (kept === undefined) recorded.set(id, (kept = repository.find(id).then((row) => row !== undefined)));
        return kept;
      });
      return new Set(removed.map(idOf)).size;
    },
  };
}
