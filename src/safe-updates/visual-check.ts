import { readBlob, type BlobBackend } from '../blobs/blob-backend.js';
import type { NetworkPolicy } from '../shared/network-policy.js';
import { pageUrls } from './health-check.js';
import type { FlowRecorder } from './safe-update-flow.js';
import { storedPolicy, storedReport, type Screenshot } from './safe-updates.schemas.js';
import { withScreenshots } from './screenshots.js';
import { compareScreenshots } from './visual-diff.js';

export interface ScreenshotStore {
  /** A safe update's PNGs, blobs `<id>/<name>`: DATA_DIR/safe-updates/ on one machine, a bucket in cluster mode. */
  blobs: BlobBackend;
  chromePath: string;
  /** The site's host is resolved and checked against it before Chromium starts (screenshots.ts). */
  network: NetworkPolicy;
}

/** A safe update's PNG (`before-0.png`, …), or null when there is none. */
export async function readScreenshot(store: ScreenshotStore, id: string, name: string): Promise<Buffer | null> {
  return readBlob(store.blobs, `${id}/${name}`).catch(() => null);
}

async function writeScreenshot(store: ScreenshotStore, id: string, name: string, png: Buffer): Promise<void> {
  await store.blobs.put(`${id}/${name}`, [png], { bytes: png.length });
}

const percent = (ratio: number) => `${(ratio * 100).toFixed(1)} %`;

/**
 * Screenshots of the checked pages before the update, and after it a comparison with them: the
 * PNGs and diffs are kept; a page changed beyond the policy's threshold flags the update, and
 * rolls it back when the policy says so. A browser that cannot run is a failed step, not a failed update.
 */
export function createVisualCheck(store: ScreenshotStore, record: FlowRecorder, siteUrl: string) {
  const row = () => record.row();
  const policy = () => storedPolicy(row());
  const urls = () => pageUrls(siteUrl, policy());
  const step = (name: string, ok: boolean, started: number, detail?: string) =>
    record.report((report) => {
      report.steps = [
        ...(report.steps ?? []),
        {
          step: name,
          ok,
          at: new Date(started).toISOString(),
          durationMs: Date.now() - started,
          ...(detail ? { detail } : {}),
        },
      ];
    });

  async function shootAll(kind: 'before' | 'after'): Promise<Buffer[] | null> {
    const started = Date.now();
    try {
      const host = new URL(siteUrl).hostname;
      const shots = await withScreenshots(
        { chromePath: store.chromePath, host, network: store.network },
        async (shoot) => {
          const taken: Buffer[] = [];
          for (const url of urls()) taken.push(await shoot(url));
          return taken;
        },
      );
      const id = row().id;
      await Promise.all(shots.map((png, index) => writeScreenshot(store, id, `${kind}-${index}.png`, png)));
      await step(`screenshots-${kind}`, true, started, `${shots.length} page(s)`);
      return shots;
    } catch (error) {
      await step(`screenshots-${kind}`, false, started, error instanceof Error ? error.message : String(error));
      return null;
    }
  }

  /**
   * Screenshots of the pages now, compared with those before: kept with their diffs, written to the report
   * (`visualChange`: a page changed beyond the threshold). Null when there is nothing to compare.
   */
  async function compareAfter(): Promise<Screenshot[] | null> {
    const { visual } = policy();
    const id = row().id;
    const previous = storedReport(row()).screenshots ?? [];
    if (!visual.enabled || !previous.some((shot) => shot.before)) return null;
    const shots = await shootAll('after');
    if (!shots) return null;
    const compared: Screenshot[] = [];
    for (const [index, shot] of previous.entries()) {
      const after = shots[index];
      const before = shot.before ? await readScreenshot(store, id, shot.before) : null;
      if (!after || !before) {
        compared.push({ ...shot, after: after ? `after-${index}.png` : null });
        continue;
      }
      const { ratio, diff } = await compareScreenshots(before, after);
      // A diff that cannot be stored is left out of the report; the comparison stands.
      const diffName = await writeScreenshot(store, id, `diff-${index}.png`, diff).then(
        () => `diff-${index}.png`,
        () => null,
      );
      compared.push({ ...shot, after: `after-${index}.png`, diff: diffName, changedRatio: ratio });
    }
    await record.report((report) => {
      report.screenshots = compared;
      report.visualChange = compared.some((shot) => (shot.changedRatio ?? 0) > visual.threshold);
    });
    return compared;
  }

  return {
    async before(): Promise<void> {
      if (!policy().visual.enabled) return;
      const shots = await shootAll('before');
      await record.report(
        (report) =>
          (report.screenshots = urls().map((url, index) => ({
            url,
            before: shots ? `before-${index}.png` : null,
            after: null,
            diff: null,
            changedRatio: null,
          }))),
      );
    },

    /** After a healthy after-check: why to roll back for the look of the pages, or null. */
    async after(): Promise<{ reason: string; message: string } | null> {
      const { visual } = policy();
      const compared = await compareAfter();
      if (!compared) return null;
      const changed = compared.filter((shot) => (shot.changedRatio ?? 0) > visual.threshold);
      if (changed.length === 0 || !visual.rollback) return null;
      return {
        reason: 'visual-change',
        message: changed
          .map(
            (shot) =>
              `${shot.url} changed on ${percent(shot.changedRatio!)} of its pixels (threshold ${percent(visual.threshold)})`,
          )
          .join('; '),
      };
    },

    /**
     * Before a rollback for another reason (a fatal error, a failed check): the pages as the update left
     * them, kept in the report as the evidence of what broke (each page within the screenshots' time limit).
     */
    async evidence(): Promise<void> {
      await compareAfter();
    },
  };
}
