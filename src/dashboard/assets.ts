import { existsSync, readFileSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Hono } from 'hono';

const TYPES: Record<string, string> = {
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** src/dashboard/assets, found from src/ and from dist/src/ (tsc copies no CSS). */
function assetsDir(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  const candidates = [resolve(here, 'assets'), resolve(here, '../../../src/dashboard/assets')];
  return candidates.find((candidate) => existsSync(candidate)) ?? candidates[0]!;
}

/** One of the dashboard's own files, as text. */
export const readAsset = (name: string): string => readFileSync(resolve(assetsDir(), name), 'utf8');

/** The dashboard's own files, read once; public (no secrets in them), cached for a day. */
export function createAssetRoutes(names: string[]) {
  const dir = assetsDir();
  const files = new Map(names.map((name) => [name, readFileSync(resolve(dir, name))]));
  const app = new Hono();
  app.get('/assets/:name', (c) => {
    const name = c.req.param('name');
    const body = files.get(name);
    if (!body) return c.notFound();
    return c.body(new Uint8Array(body), 200, {
      'content-type': TYPES[extname(name)] ?? 'application/octet-stream',
      'cache-control': 'public, max-age=86400',
    });
  });
  return app;
}
