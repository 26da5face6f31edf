import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { PROJECT_ROOT, unitMemoryEnv } from './support/daemon-process.js';

const root = mkdtempSync(join(tmpdir(), 'sitewarden-install-'));
const unitPath = join(root, 'etc/systemd/system/sitewarden.service');
const envPath = join(root, 'etc/sitewarden/sitewarden.env');
const install = () =>
  spawnSync('bash', [join(PROJECT_ROOT, 'scripts/install-service.sh'), '--root', root], { encoding: 'utf8' });

afterAll(() => rmSync(root, { recursive: true, force: true }));

/** scripts/install-service.sh as the README tells operators to run it, into a scratch root. */
describe('the systemd installation', () => {
  it('installs the unit for this checkout and the example configuration, with their modes', () => {
    const result = install();
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout.trim().split('\n')).toEqual([`installed ${unitPath}`, `installed ${envPath}`]);
    expect(statSync(unitPath).mode & 0o777).toBe(0o644);
    expect(statSync(envPath).mode & 0o777).toBe(0o640);
    expect(readFileSync(envPath, 'utf8')).toBe(
      readFileSync(join(PROJECT_ROOT, 'systemd/sitewarden.env.example'), 'utf8'),
    );

    const unit = readFileSync(unitPath, 'utf8');
    expect(unit).not.toContain('/opt/sitewarden');
    const node = spawnSync('bash', ['-c', 'command -v node'], { encoding: 'utf8' }).stdout.trim();
    expect(unit).toMatch(
      new RegExp(`^ExecStart=${escape(node)} ${escape(PROJECT_ROOT)}/dist/src/cli\\.js start$`, 'm'),
    );
    expect(unit).toMatch(new RegExp(`^WorkingDirectory=${escape(PROJECT_ROOT)}$`, 'm'));
    expect(unit).toContain('EnvironmentFile=-/etc/sitewarden/sitewarden.env');
  });

  it('passes systemd-analyze verify without a warning', () => {
    // scripts/setup.sh --test installs Debian's systemd package, which has systemd-analyze.
    const verify = spawnSync('systemd-analyze', ['verify', unitPath], { encoding: 'utf8' });
    expect(verify.error, 'systemd-analyze is missing: run scripts/setup.sh --test').toBeUndefined();
    expect(verify.stderr).toBe('');
    expect(verify.status).toBe(0);
    // The same check catches a broken unit (an unknown key is only a warning, so stderr counts).
    const broken = join(root, 'etc/systemd/system/broken.service');
    writeFileSync(
      broken,
      readFileSync(unitPath, 'utf8').replace('KillSignal=SIGTERM', 'KillSignal=SIGTERM\nTimeoutStopSecs=30s'),
    );
    expect(spawnSync('systemd-analyze', ['verify', broken], { encoding: 'utf8' }).stderr).toContain(
      "Unknown key 'TimeoutStopSecs'",
    );
    rmSync(broken);
  });

  it('never overwrites an existing configuration', () => {
    writeFileSync(envPath, 'SITEWARDEN_PORT=9090\n');
    const again = install();
    expect(again.status, again.stderr).toBe(0);
    expect(again.stdout).toContain(`kept ${envPath} as it is`);
    expect(readFileSync(envPath, 'utf8')).toBe('SITEWARDEN_PORT=9090\n');
  });

  it('starts the daemon with the same memory settings under systemd, scripts/start.sh and the tests', () => {
    const settings = unitMemoryEnv();
    expect(settings).toEqual({
      MALLOC_ARENA_MAX: '2',
      MALLOC_MMAP_THRESHOLD_: '131072',
      NODE_OPTIONS: '--max-semi-space-size=1',
    });
    // start.sh's own reading of the unit, run alone: what it exports before it starts the daemon.
    const script = readFileSync(join(PROJECT_ROOT, 'scripts/start.sh'), 'utf8');
    const reading = script.split('\n').find((line) => line.includes('MALLOC_') && !line.startsWith('#'))!;
    const exported = spawnSync('bash', ['-c', `${reading}\nenv`], { cwd: PROJECT_ROOT, encoding: 'utf8', env: {} });
    for (const [name, value] of Object.entries(settings))
      expect(`\n${exported.stdout}`).toContain(`\n${name}=${value}\n`);
  });

  it('gives shutdown more time than the daemon’s own grace period', () => {
    const unit = readFileSync(join(PROJECT_ROOT, 'systemd/sitewarden.service'), 'utf8');
    const stopTimeoutMs = Number(/^TimeoutStopSec=(\d+)s$/m.exec(unit)?.[1]) * 1000;
    // The grace period is shared by the whole shutdown; a few seconds are left for the rest.
    expect(stopTimeoutMs - loadConfig({}).shutdownGraceMs).toBeGreaterThanOrEqual(5_000);
  });

  it('is installed the way the README says', () => {
    const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
    const section = readme.slice(
      readme.indexOf('## Running under systemd'),
      readme.indexOf('\n## ', readme.indexOf('## Running under systemd') + 1),
    );
    expect(section).toContain('bash scripts/install-service.sh');
    for (const path of ['/etc/systemd/system/sitewarden.service', '/etc/sitewarden/sitewarden.env'])
      expect(section).toContain(path);
    expect(section).toContain('systemctl daemon-reload && systemctl enable --now sitewarden');
    expect(section).toMatch(/never overwrit/);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
