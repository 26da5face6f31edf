import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

const PROJECT_ROOT = resolve(import.meta.dirname, '../..');

/**
 * The audit worker runs as `node <file>`, and Node 20 cannot run TypeScript: tests bundle
 * src/performance/audit-worker.ts (its own modules only; packages stay imports) into a file
 * under node_modules, where `lighthouse` and `chrome-launcher` resolve. Production runs the copy
 * `npm run build` compiles into dist/.
 */
export async function buildAuditWorker(): Promise<string> {
  const outdir = join(PROJECT_ROOT, 'node_modules/.cache/sitewarden-test');
  mkdirSync(outdir, { recursive: true });
  const outfile = join(outdir, `audit-worker-${process.pid}.mjs`);
  await build({
    entryPoints: [join(PROJECT_ROOT, 'src/performance/audit-worker.ts')],
    outfile,
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'silent',
  });
  return outfile;
}
