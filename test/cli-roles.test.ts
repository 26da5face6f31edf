import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOnce, runCli } from './support/daemon-process.js';

beforeAll(() => buildOnce(), 120_000);

const dataDirs: string[] = [];
afterAll(() => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

function start(args: string[]) {
  const dataDir = mkdtempSync(join(tmpdir(), 'sitewarden-cli-roles-'));
  dataDirs.push(dataDir);
  const result = runCli(['start', ...args], {
    SITEWARDEN_DATA_DIR: dataDir,
    SITEWARDEN_HOST: '127.0.0.1',
    SITEWARDEN_PORT: '0',
  });
  return { ...result, dataDir };
}

describe('sitewarden start --role and --kinds', () => {
  it.each([
    [['--role', 'boss'], 'sitewarden: --role must be one of all, api, worker (not "boss")'],
    [
      ['--role', 'worker', '--kinds', 'uptime,mail'],
      'sitewarden: --kinds takes uptime, audits, backups, updates (not "mail")',
    ],
    [['--kinds', 'backups'], 'sitewarden: --kinds goes only with --role worker'],
    [['--role', 'api', '--kinds', 'backups'], 'sitewarden: --kinds goes only with --role worker'],
  ])('refuses %j with one line naming the flag and exit status 2', (args, line) => {
    const result = start(args);
    expect(result.status).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([line]);
    expect(readdirSync(result.dataDir)).toEqual([]);
  });

  it('refuses an unknown flag with one line and exit status 2', () => {
    const result = start(['--roles', 'api']);
    expect(result.status).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain("'--roles'");
  });

  it.each([[['--role', 'api']], [['--role', 'worker', '--kinds', 'backups']], [['--role', 'worker']]])(
    'refuses %j on a single data directory: it needs cluster mode',
    (args) => {
      const result = start(args);
      expect(result.status).toBe(2);
      const lines = result.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^sitewarden: --role (api|worker) needs cluster mode \(SITEWARDEN_DATABASE_URL/);
      expect(lines[0]).toContain('runs only --role all');
      // Refused before the data directory is locked, tightened or migrated.
      expect(readdirSync(result.dataDir)).toEqual([]);
    },
  );

  it('describes the roles in --help', () => {
    const result = runCli(['--help'], {});
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('start [--role all|api|worker] [--kinds uptime,audits,backups,updates]');
  });
});
