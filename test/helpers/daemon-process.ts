import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { eventsInOutput, noteEmitted } from '../support/event-coverage.js';

export const PROJECT_ROOT = resolve(import.meta.dirname, '../..');
export const CLI = resolve(PROJECT_ROOT, 'dist/src/cli.js');

/** The tests of the real process run the compiled CLI, as systemd does; build it first. */
export function buildOnce(): void {
  const result = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: PROJECT_ROOT, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`build failed:\n${result.stdout}${result.stderr}`);
}

export function runCli(args: string[], env: Record<string, string>) {
  return spawnSync(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8', timeout: 30_000 });
}

/** Starts `sitewarden start` and resolves once it logs `daemon.started`, with the port it bound. */
export async function startDaemonProcess(env: Record<string, string>): Promise<{ child: ChildProcess; port: number; logs: () => string; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [CLI, 'start'], { env: { PATH: process.env.PATH ?? '', SITEWARDEN_PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  // The real process's events count for the end-of-run catalogue check (test/support/event-coverage.ts).
  child.once('close', () => noteEmitted(eventsInOutput(output)));
  const port = await new Promise<number>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`daemon did not start:\n${output}`)), 20_000);
    const check = () => {
      const match = /"event":"daemon.started"[^\n]*"listen":"[^"]*:(\d+)"/.exec(output);
      if (match) {
        clearTimeout(timer);
        done(Number(match[1]));
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => fail(new Error(`daemon exited with ${code}:\n${output}`)));
  });
  return { child, port, logs: () => output, exited };
}

/**
 * Calls the API of a daemon process with a token; `port` is read on each call, so the caller
 * keeps working across restarts of the daemon.
 */
export function daemonApi(port: () => number, token: string) {
  return async (method: string, path: string, json?: unknown) => {
    const response = await fetch(`http://127.0.0.1:${port()}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...(json ? { 'content-type': 'application/json' } : {}) }, body: json ? JSON.stringify(json) : undefined });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON answers
    return { status: response.status, json: (await response.json()) as any };
  };
}
