import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { diesWithParent } from '../../src/performance/launch-chromium.js';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('Chromium dies with the process that started it', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0)) await step();
  });

  it('wraps the command in setpriv with a parent-death SIGKILL, and leaves it alone without setpriv', () => {
    expect(diesWithParent('/usr/bin/chromium', ['--headless'])).toEqual({
      command: '/usr/bin/setpriv',
      args: ['--pdeathsig', 'KILL', '--', '/usr/bin/chromium', '--headless'],
    });
    expect(diesWithParent('/usr/bin/chromium', ['--headless'], '/nonexistent/setpriv')).toEqual({
      command: '/usr/bin/chromium',
      args: ['--headless'],
    });
  });

  it('a SIGKILLed launcher leaves no Chromium behind (the daemon or an audit worker killed outright)', async () => {
    const profile = await mkdtemp(join(tmpdir(), 'sw-pdeathsig-'));
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, '../support/chromium-launch-worker.ts'), profile],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let chromePid = 0;
    cleanup.push(async () => {
      child.kill('SIGKILL');
      if (chromePid && alive(chromePid)) process.kill(-chromePid, 'SIGKILL');
      await rm(profile, { recursive: true, force: true });
    });
    chromePid = await new Promise<number>((resolve, reject) => {
      let out = '';
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk;
        const line = out.split('\n')[0];
        if (out.includes('\n')) resolve(Number(line));
      });
      child.once('exit', (code) => reject(new Error(`the launcher exited (${code}) before Chromium started`)));
    });
    expect(chromePid).toBeGreaterThan(0);
    expect(alive(chromePid)).toBe(true);

    child.kill('SIGKILL');
    const until = Date.now() + 15_000;
    while (alive(chromePid) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(alive(chromePid)).toBe(false);
  }, 60_000);
});
