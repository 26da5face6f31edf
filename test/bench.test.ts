import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');

/** `npm run bench -- ARGS` as the package script runs it (the runner alone: no suite is run here). */
function bench(...args: string[]) {
  const script = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
    .scripts.bench;
  expect(script).toBe('node --import tsx bench/run.ts');
  return spawnSync(process.execPath, ['--import', 'tsx', join(root, 'bench/run.ts'), ...args], {
    cwd: root,
    encoding: 'utf8',
  });
}

/** The suites: every script directly in bench/ but the runner (helpers in bench/support/, probes in bench/lab/). */
const suites = readdirSync(join(root, 'bench'))
  .filter((name) => name.endsWith('.ts') && name !== 'run.ts')
  .map((name) => name.slice(0, -'.ts'.length));

describe('npm run bench', () => {
  it('lists every suite in bench/, and nothing else', () => {
    expect(suites.length).toBeGreaterThan(5);
    const listed = bench();
    expect(listed.status).toBe(0);
    const names = [...listed.stdout.matchAll(/^ {2}(\S+) {2}/gm)].map((match) => match[1]);
    expect(names.sort()).toEqual([...suites].sort());
  }, 30_000);

  it('refuses a name that is no suite, with the list', () => {
    const refused = bench('lab/module-rss');
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('no suite lab/module-rss');
    expect(refused.stderr).toContain('  bulk-updates  ');
  }, 30_000);

  it('ends every suite with the summary table', () => {
    for (const suite of suites)
      expect(readFileSync(join(root, 'bench', `${suite}.ts`), 'utf8'), suite).toMatch(/\bprintSummary\(/);
  });

  it('gives each suite its current figure in docs/benchmarks.md, run by its command', () => {
    const page = readFileSync(join(root, 'docs/benchmarks.md'), 'utf8');
    for (const suite of suites) expect(page, suite).toContain(`npm run bench -- ${suite}`);
  });
});
