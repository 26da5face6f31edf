import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildOnce, runCli, startDaemonProcess } from './support/daemon-process.js';

beforeAll(() => buildOnce(), 120_000);

const freshDataDir = () => mkdtempSync(join(tmpdir(), 'sitewarden-daemon-'));

describe('the sitewarden process', () => {
  it('starts, writes a bootstrap token, serves the API with it, and stops cleanly on SIGTERM', async () => {
    const dataDir = freshDataDir();
    const daemon = await startDaemonProcess({ SITEWARDEN_DATA_DIR: dataDir });
    const tokenFile = join(dataDir, 'admin-token');
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    expect(statSync(dataDir).mode & 0o077).toBe(0);
    const token = readFileSync(tokenFile, 'utf8').trim();
    expect(daemon.logs()).toContain(tokenFile);
    expect(daemon.logs()).not.toContain(token);

    const sites = await fetch(`http://127.0.0.1:${daemon.port}/api/sites`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(sites.status).toBe(200);
    expect(await sites.json()).toEqual({ items: [], nextCursor: null });

    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toBe(0);
    const events = daemon
      .logs()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line).event);
    expect(events).toEqual(expect.arrayContaining(['daemon.started', 'daemon.stopping', 'daemon.stopped']));
    // Nothing is logged after the stop (the slice names it when something is).
    expect(
      daemon
        .logs()
        .split('\n')
        .filter(Boolean)
        .slice(events.indexOf('daemon.stopped') + 1),
    ).toEqual([]);
  });

  it('does not create another bootstrap token once a token exists', async () => {
    const dataDir = freshDataDir();
    expect(runCli(['token', 'create', '--name', 'ops'], { SITEWARDEN_DATA_DIR: dataDir }).status).toBe(0);
    const daemon = await startDaemonProcess({ SITEWARDEN_DATA_DIR: dataDir });
    daemon.child.kill('SIGINT');
    expect(await daemon.exited).toBe(0);
    expect(daemon.logs()).not.toContain('token.bootstrap_created');
  });

  it('refuses bad configuration with one clear line', () => {
    const result = runCli(['start'], { SITEWARDEN_PORT: 'http', SITEWARDEN_DATA_DIR: freshDataDir() });
    expect(result.status).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      'sitewarden: invalid configuration: SITEWARDEN_PORT: SITEWARDEN_PORT must be a port number',
    ]);
    const badKey = runCli(['start'], {
      SITEWARDEN_SECRET_KEY: 'abc',
      SITEWARDEN_DATA_DIR: freshDataDir(),
      SITEWARDEN_PORT: '0',
    });
    expect(badKey.status).toBe(1);
    expect(badKey.stderr.trim().split('\n')).toHaveLength(1);
    expect(badKey.stderr).toContain('SITEWARDEN_SECRET_KEY must hold a 32-byte key');
  });

  it('manages API tokens from the command line', async () => {
    const env = { SITEWARDEN_DATA_DIR: freshDataDir() };
    expect(runCli(['migrate'], env).stdout).toContain('migrations applied');
    const created = runCli(['token', 'create', '--name', 'dashboard', '--scope', 'read'], env);
    expect(created.status).toBe(0);
    const token = created.stdout.trim();
    expect(token).toMatch(/^swt_[A-Za-z0-9_-]{43}$/);
    const list = runCli(['token', 'list'], env).stdout;
    expect(list).toContain('dashboard');
    expect(list).toContain('read');
    expect(list).not.toContain(token);
    expect(runCli(['token', 'create', '--name', 'x', '--scope', 'admin'], env).stderr).toContain(
      '--scope must be read or write',
    );

    const daemon = await startDaemonProcess(env);
    const ask = () =>
      fetch(`http://127.0.0.1:${daemon.port}/api/sites`, { headers: { authorization: `Bearer ${token}` } }).then(
        (r) => r.status,
      );
    expect(await ask()).toBe(200);
    expect(runCli(['token', 'revoke', 'dashboard'], env).stdout).toContain('revoked');
    expect(await ask()).toBe(401);
    expect(runCli(['token', 'revoke', 'dashboard'], env).stderr).toContain('no active token');
    daemon.child.kill('SIGTERM');
    await daemon.exited;
  });

  it('explains unknown commands', () => {
    const result = runCli(['frobnicate'], {});
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('unknown command "frobnicate"');
    expect(result.stderr).toContain('Usage: sitewarden');
  });
});
