import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { buildOnce, PROJECT_ROOT, runCliAsync, unitMemoryEnv } from './support/daemon-process.js';

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

/** The `[Service]` directives of a unit file, in order, comments and blank lines left out. */
function directives(unit: string): string[] {
  const service = unit.slice(unit.indexOf('[Service]'), unit.indexOf('[Install]'));
  return service
    .split('\n')
    .slice(1)
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** `sitewarden start`'s flags on a unit's ExecStart line, `%I` given `instance`. */
function startArgs(unit: string, instance = ''): string[] {
  const line = /^ExecStart=(.*)$/m.exec(unit)![1]!.replaceAll('%I', instance);
  return line.split(' ').slice(line.split(' ').indexOf('start'));
}

/** scripts/install-service.sh --cluster: the units of a cluster's processes (docs/cluster.md), into a scratch root. */
describe('the systemd installation of a cluster', () => {
  const clusterRoot = mkdtempSync(join(tmpdir(), 'sitewarden-install-cluster-'));
  const unitDir = join(clusterRoot, 'etc/systemd/system');
  const apiPath = join(unitDir, 'sitewarden-api.service');
  const workerPath = join(unitDir, 'sitewarden-worker@.service');
  const clusterEnvPath = join(clusterRoot, 'etc/sitewarden/cluster.env');
  const installCluster = () =>
    spawnSync('bash', [join(PROJECT_ROOT, 'scripts/install-service.sh'), '--cluster', '--root', clusterRoot], {
      encoding: 'utf8',
    });
  /** The worker instance of audits and backups, named as docs/cluster.md names it. */
  const instance = spawnSync('systemd-escape', ['--template=sitewarden-worker@.service', 'audits,backups'], {
    encoding: 'utf8',
  }).stdout.trim();
  let result: ReturnType<typeof installCluster>;
  beforeAll(() => {
    result = installCluster();
  });
  afterAll(() => rmSync(clusterRoot, { recursive: true, force: true }));

  it('installs the API unit, the worker template and the cluster’s settings, for this checkout, with their modes', () => {
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout.trim().split('\n')).toEqual([
      `installed ${apiPath}`,
      `installed ${workerPath}`,
      `installed ${clusterEnvPath}`,
    ]);
    for (const path of [apiPath, workerPath]) expect(statSync(path).mode & 0o777).toBe(0o644);
    expect(statSync(clusterEnvPath).mode & 0o777).toBe(0o640);
    // Every setting of the example, under a header of its own that names what must be set.
    const example = readFileSync(join(PROJECT_ROOT, 'systemd/sitewarden.env.example'), 'utf8');
    const settings = readFileSync(clusterEnvPath, 'utf8');
    expect(
      settings.startsWith('# Sitewarden cluster configuration, read by systemd from /etc/sitewarden/cluster.env'),
    ).toBe(true);
    expect(settings).toContain('SITEWARDEN_DATABASE_URL and SITEWARDEN_SECRET_KEY must be set');
    expect(settings.endsWith(example.slice(example.indexOf('\n\n')))).toBe(true);

    const node = spawnSync('bash', ['-c', 'command -v node'], { encoding: 'utf8' }).stdout.trim();
    const cli = `${escape(node)} ${escape(PROJECT_ROOT)}/dist/src/cli\\.js`;
    const api = readFileSync(apiPath, 'utf8');
    const worker = readFileSync(workerPath, 'utf8');
    expect(api).toMatch(new RegExp(`^ExecStart=${cli} start --role api$`, 'm'));
    expect(worker).toMatch(new RegExp(`^ExecStart=${cli} start --role worker --kinds %I$`, 'm'));
    for (const [unit, own] of [
      [api, 'api.env'],
      [worker, 'worker-%I.env'],
    ] as const) {
      expect(unit).not.toContain('/opt/sitewarden');
      expect(unit).toMatch(new RegExp(`^WorkingDirectory=${escape(PROJECT_ROOT)}$`, 'm'));
      // The cluster's settings (required), then the process's own, which win.
      expect(directives(unit).filter((line) => line.startsWith('EnvironmentFile='))).toEqual([
        'EnvironmentFile=/etc/sitewarden/cluster.env',
        `EnvironmentFile=-/etc/sitewarden/${own}`,
      ]);
    }
  });

  it('gives every process a data directory of its own: the single unit, the API and each worker instance', () => {
    const dataDirs = [
      readFileSync(join(PROJECT_ROOT, 'systemd/sitewarden.service'), 'utf8'),
      readFileSync(apiPath, 'utf8'),
      readFileSync(workerPath, 'utf8'),
    ].map((unit) => {
      const state = /^StateDirectory=(.+)$/m.exec(unit)![1]!;
      // The data directory is the state directory systemd makes for the unit's dynamic user.
      expect(unit).toMatch(new RegExp(`^Environment=SITEWARDEN_DATA_DIR=/var/lib/${escape(state)}$`, 'm'));
      return state;
    });
    expect(dataDirs).toEqual(['sitewarden', 'sitewarden-api', 'sitewarden-worker-%I']);
  });

  it('runs each unit’s command as the CLI accepts it, the worker’s kinds from its instance name', async () => {
    expect(instance).toBe('sitewarden-worker@audits\\x2cbackups.service');
    const kinds = spawnSync('systemd-escape', ['--unescape', '--instance', instance], { encoding: 'utf8' });
    expect(kinds.stdout.trim()).toBe('audits,backups');
    const commands = [
      startArgs(readFileSync(apiPath, 'utf8')),
      startArgs(readFileSync(workerPath, 'utf8'), kinds.stdout.trim()),
    ];
    expect(commands).toEqual([
      ['start', '--role', 'api'],
      ['start', '--role', 'worker', '--kinds', 'audits,backups'],
    ]);
    buildOnce();
    // `start` reads its flags before the environment: a refused port shows the flags were taken (a refused flag
    // is exit status 2, naming the flag).
    const started = await Promise.all(commands.map((args) => runCliAsync(args, { SITEWARDEN_PORT: 'not-a-port' })));
    for (const { status, stderr } of started) {
      expect(status, stderr).toBe(1);
      expect(stderr).toContain('SITEWARDEN_PORT must be a port number');
    }
  });

  it('passes systemd-analyze verify without a warning: the API unit, the template and an instance of it', () => {
    // An instance's file beside the template: systemd-analyze reads it as the unit of that name.
    const instancePath = join(unitDir, instance);
    writeFileSync(instancePath, readFileSync(workerPath, 'utf8'));
    const verify = spawnSync('systemd-analyze', ['verify', apiPath, workerPath, instancePath], { encoding: 'utf8' });
    rmSync(instancePath);
    expect(verify.error, 'systemd-analyze is missing: run scripts/setup.sh --test').toBeUndefined();
    expect(verify.stderr).toBe('');
    expect(verify.status).toBe(0);
  });

  it('hardens, restarts, stops and sizes the cluster’s processes as the single unit does', () => {
    // What differs by design: the command, the settings files, the data directory.
    const ownToEachUnit =
      /^(ExecStart|EnvironmentFile|Environment=SITEWARDEN_DATA_DIR|StateDirectory|RestartPreventExitStatus)=/;
    const shared = (name: string) =>
      directives(readFileSync(join(PROJECT_ROOT, 'systemd', name), 'utf8')).filter((line) => !ownToEachUnit.test(line));
    const single = shared('sitewarden.service');
    expect(single).toEqual(
      expect.arrayContaining(['NoNewPrivileges=yes', 'ProtectSystem=strict', 'TimeoutStopSec=30s']),
    );
    expect(shared('sitewarden-api.service')).toEqual(single);
    expect(shared('sitewarden-worker@.service')).toEqual(single);
  });

  it('is installed and tried the way docs/cluster.md says', () => {
    const page = readFileSync(join(PROJECT_ROOT, 'docs/cluster.md'), 'utf8');
    const section = (heading: string) =>
      page.slice(page.indexOf(heading), page.indexOf('\n## ', page.indexOf(heading)));
    const install = section('## Installing the units');
    expect(install).toContain('bash scripts/install-service.sh --cluster');
    expect(install).toContain('systemd-escape --template=sitewarden-worker@.service backups,updates');
    // Every settings file and data directory the units name, a worker's kinds written KINDS.
    for (const name of ['sitewarden-api.service', 'sitewarden-worker@.service']) {
      const unit = readFileSync(join(PROJECT_ROOT, 'systemd', name), 'utf8');
      for (const [, path] of unit.matchAll(/^(?:EnvironmentFile=-?|Environment=SITEWARDEN_DATA_DIR=)(.+)$/gm))
        expect(install).toContain(path!.replace('%I', 'KINDS').replace('/etc/sitewarden/', ''));
    }
    const trying = section('## Trying it');
    for (const words of ['bash scripts/cluster-try.sh', '--stop D', 'WORKER_KINDS', '`uptime,audits,backups,updates`'])
      expect(trying).toContain(words);
    expect(readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8')).toContain('`bash scripts/cluster-try.sh`');
  });

  it('keeps an existing cluster configuration and refreshes the units', () => {
    writeFileSync(clusterEnvPath, 'SITEWARDEN_DATABASE_URL=postgres://db.internal/sitewarden\n');
    writeFileSync(apiPath, 'stale\n');
    const again = installCluster();
    expect(again.status, again.stderr).toBe(0);
    expect(again.stdout).toContain(`kept ${clusterEnvPath} as it is`);
    expect(readFileSync(clusterEnvPath, 'utf8')).toBe('SITEWARDEN_DATABASE_URL=postgres://db.internal/sitewarden\n');
    expect(readFileSync(apiPath, 'utf8')).toContain('start --role api');
    // An unknown option is refused before anything is written.
    const wrong = spawnSync('bash', [join(PROJECT_ROOT, 'scripts/install-service.sh'), '--clustre'], {
      encoding: 'utf8',
    });
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toContain('install-service: unknown option --clustre');
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
