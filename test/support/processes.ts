import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { waitFor } from './wait.js';

/**
 * Long-running helper processes (mariadbd, php -S) that must never outlive the
 * Node process that started them, even when that process is killed with SIGKILL.
 *
 * Each one runs under a tiny sh watchdog in its own process group. The watchdog
 * holds the read end of a pipe whose write end only this Node process owns; when
 * Node dies for any reason the kernel closes the pipe, `read` returns, and the
 * watchdog kills the whole group (php -S workers included).
 */
const WATCHDOG = ['exec 3<&0', '(read _ <&3; kill -TERM 0) </dev/null &', 'exec "$@" 3<&- </dev/null'].join('\n');

export interface OwnedProcess {
  pid: number;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  hasExited(): boolean;
  /** SIGTERM the group, SIGKILL it if it has not gone after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
  /** The last part of the process's output file, for error messages. */
  outputTail(): string;
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Only synchronous work is possible here; the watchdog covers harder deaths.
  process.on('exit', () => {
    for (const child of live) killGroup(child, 'SIGKILL');
  });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Not a group leader (runCommand children) or already gone.
    try {
      process.kill(child.pid, signal);
    } catch {
      // Already gone.
    }
  }
}

export function spawnOwned(options: {
  command: string;
  args: string[];
  /** stdout and stderr are appended here (never a pipe: nobody would drain it). */
  logFile: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}): OwnedProcess {
  installExitHook();
  const logFd = openSync(options.logFile, 'a');
  const child = spawn('/bin/sh', ['-c', WATCHDOG, 'sitewarden-watchdog', options.command, ...options.args], {
    cwd: options.cwd,
    env: options.env ?? process.env,
    detached: true,
    stdio: ['pipe', logFd, logFd],
  });
  closeSync(logFd);
  if (child.pid === undefined) throw new Error(`could not start ${options.command}`);
  live.add(child);

  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      exitCode = code;
      live.delete(child);
      // Lets the watchdog's reader finish so no orphaned sh is left waiting.
      child.stdin?.destroy();
      resolve(code);
    });
    child.once('error', () => {
      exitCode = null;
      live.delete(child);
      resolve(null);
    });
  });
  // A forgotten process must not keep a test worker alive.
  child.unref();
  (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();

  const tail = () => {
    try {
      return readFileSync(options.logFile, 'utf8').slice(-4000);
    } catch {
      return '';
    }
  };

  return {
    pid: child.pid,
    exited,
    hasExited: () => exitCode !== undefined,
    outputTail: tail,
    async stop(graceMs = 5_000) {
      if (exitCode !== undefined) return;
      killGroup(child, 'SIGTERM');
      const timer = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * A TypeScript script of the tests (a worker or listener fixture) in a process of its own, run from the
 * project root with `node --import tsx`, its plan in an environment variable as JSON.
 */
export function spawnScript(
  script: string,
  { logFile, planVariable, plan }: { logFile: string; planVariable: string; plan: unknown },
): OwnedProcess {
  return spawnOwned({
    command: process.execPath,
    args: ['--import', 'tsx', script],
    logFile,
    cwd: resolvePath(import.meta.dirname, '../..'),
    env: { ...process.env, [planVariable]: JSON.stringify(plan) },
  });
}

/** Waits until a worker script (spawnScript) has written `ready` to its output; its output tail in the error otherwise. */
export async function untilReady(worker: OwnedProcess, timeoutMs = 60_000): Promise<OwnedProcess> {
  await waitFor(
    () => worker.outputTail().includes('ready'),
    timeoutMs,
    () => `worker ready\n${worker.outputTail()}`,
  );
  return worker;
}

/** Runs a short command to completion, collecting its output; rejects with stderr on failure. */
export function runCommand(
  command: string,
  args: string[],
  options: { input?: string; env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number; label?: string } = {},
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    live.add(child);
    installExitHook();
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timeoutMs = options.timeoutMs ?? 60_000;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      stderr += `\n[killed after ${timeoutMs} ms]`;
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      live.delete(child);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      live.delete(child);
      if (code === 0) return resolve({ stdout, stderr });
      const how = signal ? `signal ${signal}` : `exit code ${code}`;
      const label = options.label ?? `${command} ${args.join(' ')}`;
      reject(
        new Error(
          `${label} failed (${how})\n--- stderr ---\n${stderr.trim()}\n--- stdout ---\n${stdout.trim().slice(-4000)}`,
        ),
      );
    });
    // A command that exits without reading its input must not crash us with EPIPE.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}
