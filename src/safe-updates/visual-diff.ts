/** Pixelmatch's per-pixel colour tolerance (its default): anti-aliasing noise is not a change. */
const PIXEL_THRESHOLD = 0.1;

/**
 * The share of pixels that differ between two screenshots (0–1) and the diff image (changed pixels
 * red over a faded copy of the first). Screenshots of different sizes count as changed entirely.
 */
export async function compareScreenshots(before: Buffer, after: Buffer): Promise<{ ratio: number; diff: Buffer }> {
  // Loaded when first used, as the screenshots' browser is (src/safe-updates/screenshots.ts).
  const [{ default: pixelmatch }, { PNG }] = await Promise.all([import('pixelmatch'), import('pngjs')]);
  const a = PNG.sync.read(before);
  const b = PNG.sync.read(after);
  if (a.width !== b.width || a.height !== b.height) return { ratio: 1, diff: PNG.sync.write(b) };
  const diff = new PNG({ width: a.width, height: a.height });
  const changed = pixelmatch(a.data, b.data, diff.data, a.width, a.height, { threshold: PIXEL_THRESHOLD });
  return { ratio: changed / (a.width * a.height), diff: PNG.sync.write(diff) };
}
