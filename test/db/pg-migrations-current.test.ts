import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';

/**
 * drizzle-pg/ is what drizzle-kit generates from `src/**\/*.pg-table.ts` (issue 34): a PostgreSQL table
 * changed without `npm run db:generate:pg` (or a migration edited by hand in a way its snapshot does not
 * say) fails here. `drizzle-kit check` in `npm run lint` checks the snapshots' chain, not this.
 */
const root = resolve(import.meta.dirname, '../..');
// drizzle-kit takes `--out` relative to the working directory: a scratch copy under .test-work/.
mkdirSync(join(root, '.test-work'), { recursive: true });
const scratch = mkdtempSync(join(root, '.test-work', 'pg-drift-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

it('drizzle-pg/ holds every change of the PostgreSQL tables: generating again finds none', async () => {
  const out = join(scratch, 'drizzle-pg');
  cpSync(join(root, 'drizzle-pg'), out, { recursive: true });
  const before = readdirSync(out, { recursive: true }).sort();

  const { stdout } = await promisify(execFile)(
    join(root, 'node_modules/.bin/drizzle-kit'),
    ['generate', '--dialect=postgresql', '--schema=./src/**/*.pg-table.ts', `--out=./${relative(root, out)}`],
    { cwd: root, timeout: 120_000 },
  );

  expect(stdout).toContain('No schema changes');
  expect(readdirSync(out, { recursive: true }).sort()).toEqual(before);
});
