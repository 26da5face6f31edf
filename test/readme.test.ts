import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Issue 35: the README is a manual read in ten minutes (about 250 words a minute), and what a
 * first read does not need lives in docs/: the operator commands, the unit, health and metrics in
 * docs/operations.md. Links and anchors are checked by test/docs.test.ts.
 */
const root = resolve(import.meta.dirname, '..');
const read = (path: string): string => readFileSync(join(root, path), 'utf8');
const readme = read('README.md');
const operations = read('docs/operations.md');

describe('the README, a manual read in ten minutes', () => {
  it('is at most 2,500 words (wc -w)', () => {
    const words = readme.split(/\s+/).filter((word) => word !== '').length;
    expect(words).toBeLessThanOrEqual(2_500);
  });

  it('keeps what it is, the two commands, configuration, the daily tasks and operations', () => {
    const headings = [...readme.matchAll(/^#{2,3} (.+)$/gm)].map((match) => match[1]!);
    expect(headings).toEqual(
      expect.arrayContaining([
        'The two commands',
        'The dashboard',
        'Team access',
        'Network boundary',
        'Configuration',
        'Operator commands',
        'Running under systemd',
        'The API',
        'Metrics and health',
        'Operations',
        'Logs',
        'Backups',
        'Upgrade',
      ]),
    );
    expect(readme).toContain(
      'bash scripts/start.sh    # set up (Debian packages, npm ci), build, and start the daemon on 127.0.0.1:8080',
    );
    expect(readme).toContain(
      'bash scripts/test.sh     # set up everything the tests need, then lint, type-check, build and run every test',
    );
  });

  it('has every command of `sitewarden help` in docs/operations.md, and each command in the README', () => {
    const usage = /const USAGE = `([\s\S]*?)`;/.exec(read('src/cli.ts'))![1]!;
    const commands = [...usage.matchAll(/^ {2}([a-z]+(?: [a-z-]+)?)(?=\s)/gm)].map((match) =>
      match[1]!.replace(/ (NAME|ID|BACKUP_ID)$/, ''),
    );
    expect(commands).toEqual(expect.arrayContaining(['start', 'token create', 'users set-scope', 'version']));
    for (const command of commands) {
      expect(operations, command).toMatch(new RegExp(`^\\| \`sitewarden ${command}\\b`, 'm'));
      // The README's short table names each command on a row of its group (`users create\|set-role…`).
      const [group, sub = ''] = command.split(' ');
      const rows = readme.split('\n').filter((line) => new RegExp(`^\\| \`sitewarden ${group}[ \`]`).test(line));
      if (command !== 'version')
        expect(
          rows.some((row) => new RegExp(`[ |]${sub}\\b`).test(row)),
          command,
        ).toBe(true);
    }
  });

  it('lists every metric the daemon registers in docs/operations.md', () => {
    const metrics = [...read('src/metrics/metrics.ts').matchAll(/name: '(sitewarden_[a-z_]+)'/g)].map(
      (match) => match[1]!,
    );
    expect(metrics.length).toBeGreaterThan(5);
    for (const metric of metrics) expect(operations, metric).toMatch(new RegExp(`^\\| \`${metric}\` \\|`, 'm'));
  });
});
