import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const MiB = 1024 * 1024;

/** A media library of about `mediaMb` MiB under the site's uploads: a few large videos, many photos, many thumbnails (random bytes: incompressible). */
export function generateMedia(siteRoot: string, mediaMb: number): void {
  const uploads = join(siteRoot, 'wp-content/uploads/2026');
  const shares = [
    { count: Math.round((mediaMb * 0.45) / 12), size: 12 * MiB, dir: 'videos' },
    { count: Math.round((mediaMb * 0.5) / 2), size: 2 * MiB, dir: 'photos' },
    { count: Math.round((mediaMb * 0.05 * 1024) / 48), size: 48 * 1024, dir: 'thumbs' },
  ];
  for (const { count, size, dir } of shares) {
    mkdirSync(join(uploads, dir), { recursive: true });
    for (let i = 0; i < count; i++) writeFileSync(join(uploads, dir, `${dir}-${i}.bin`), randomBytes(size));
  }
}
