import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { setPriority } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { WorkerMessageSchema, type AuditRequest, type AuditSummary, type WorkerMessage } from './audit-protocol.js';
import { parseStored } from '../shared/stored-json.js';
import type { AuditFailureReason } from './performance.table.js';

export type AuditOutcome =
  { ok: true; summary: AuditSummary } | { ok: false; reason: AuditFailureReason; message: string };

export interface AuditRunner {
  /** Runs one audit in a worker process; never rejects. `timeoutMs` is the hard limit; `signal` kills it sooner (cancel). */
  run(request: AuditRequest, timeoutMs: number, signal?: AbortSignal): Promise<AuditOutcome>;
  /** Kills every running worker and its Chrome (shutdown). */
  killAll(): void;
}

/** `npm run build` compiles the worker next to this file. */
export function defaultAuditWorkerPath(): string {
  return fileURLToPath(new URL('./audit-worker.js', import.meta.url));
}

const STDERR_TAIL_BYTES = 2000;

/** Kills a whole process group (or, given a negative number, one process); it may be gone already. */
function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // ESRCH: nothing left to kill
  }
}

/** The processes whose command line names `dir` (this one left out). A zombie's names nothing: it has gone. */
function processesNaming(dir: string): number[] {
  const pids: number[] = [];
  for (const name of existsSync('/proc') ? readdirSync('/proc') : []) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    let cmdline = '';
    try {
      cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8');
    } catch {
      continue; // Gone since the listing.
    }
    if (cmdline.includes(dir)) pids.push(Number(name));
  }
  return pids;
}

/**
 * Kills every process (and its group) whose command line names `dir`, and says how many. Two uses:
 * after an audit, the last safety net for a Chrome the worker started but never reported (it hung
 * while launching), which still names the audit's own profile directory; and at start, with the
 * work root, the workers and Chromes a killed daemon left running (each leads its own process
 * group, so a daemon killed outside systemd's cgroup leaves them behind, a Chrome at full CPU on a
 * page nobody reads). Synchronous: one read of /proc, once per audit and once at start (after an
 * audit, `goneNaming` reads it again until what was killed has gone).
 */
export function killProcessesNaming(dir: string): number {
  const pids = processesNaming(dir);
  for (const pid of pids) {
    killGroup(pid);
    killGroup(-pid);
  }
  return pids.length;
}

/**
 * Resolves once no process names `dir`, or after `withinMs`: a process sent SIGKILL takes a moment
 * to go (a Chrome's memory is released first), and an audit is not over while its Chrome is there.
 */
async function goneNaming(dir: string, withinMs = 5_000): Promise<void> {
  const until = Date.now() + withinMs;
  while (processesNaming(dir).length > 0 && Date.now() < until) await sleep(20);
}

/**
 * Starts the worker detached, so it leads its own process group, and kills that group and
 * every Chrome group the worker reported (chrome-launcher starts Chrome as a group leader too)
 * when the time limit passes, when the worker exits, and at shutdown: no Chrome outlives its audit.
 */
export function createAuditRunner({
  workerPath,
  logger,
  nice = 0,
}: {
  workerPath: string;
  logger: Logger;
  nice?: number;
}): AuditRunner {
  const running = new Set<() => void>();

  function run(request: AuditRequest, timeoutMs: number, stopSignal?: AbortSignal): Promise<AuditOutcome> {
    if (!existsSync(workerPath)) {
      return Promise.resolve({
        ok: false,
        reason: 'worker_crashed',
        message: `the audit worker ${workerPath} is missing; run npm run build`,
      });
    }
    return new Promise<AuditOutcome>((resolve) => {
      const child = spawn(process.execPath, [workerPath], {
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
        env: workerEnv(),
      });
      // Before the request is sent, so the worker's Chromium (which inherits it) starts at it too.
      if (nice > 0 && child.pid !== undefined) {
        try {
          setPriority(child.pid, nice);
        } catch (error) {
          logger.warn({ err: error, nice }, 'could not lower the audit worker’s priority');
        }
      }
      const chromePids = new Set<number>();
      let outcome: AuditOutcome | undefined;
      let stdout = '';
      let stderrTail = '';

      const killEverything = () => {
        if (child.pid !== undefined) killGroup(child.pid);
        for (const pid of chromePids) killGroup(pid);
      };
      const timer = setTimeout(() => {
        outcome ??= {
          ok: false,
          reason: 'timeout',
          message: `the audit did not finish within ${timeoutMs} ms and was killed`,
        };
        killEverything();
      }, timeoutMs);
      running.add(killEverything);
      const stop = () => {
        outcome ??= { ok: false, reason: 'interrupted', message: 'the audit was stopped and its worker killed' };
        killEverything();
      };
      if (stopSignal?.aborted) stop();
      else stopSignal?.addEventListener('abort', stop, { once: true });

      const handle = (message: WorkerMessage) => {
        if (message.type === 'chrome') chromePids.add(message.pid);
        else if (message.type === 'completed') outcome ??= { ok: true, summary: message.summary };
        else outcome ??= { ok: false, reason: message.reason, message: message.message };
      };
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
        let newline;
        while ((newline = stdout.indexOf('\n')) >= 0) {
          const line = stdout.slice(0, newline);
          stdout = stdout.slice(newline + 1);
          try {
            handle(parseStored(WorkerMessageSchema, line, 'a line of the audit worker'));
          } catch {
            logger.debug({ line: line.slice(0, 500) }, 'audit worker printed a line outside the protocol');
          }
        }
      });
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderrTail = (stderrTail + chunk).slice(-STDERR_TAIL_BYTES);
      });
      child.stdin.on('error', () => undefined);
      child.stdin.end(JSON.stringify(request));

      child.once('error', (error) => {
        outcome ??= {
          ok: false,
          reason: 'worker_crashed',
          message: `the audit worker did not start: ${error.message}`,
        };
      });
      child.once('close', (code, signal) => {
        clearTimeout(timer);
        stopSignal?.removeEventListener('abort', stop);
        running.delete(killEverything);
        killEverything();
        outcome ??= {
          ok: false,
          reason: 'worker_crashed',
          message: `the audit worker exited (${signal ?? `code ${code}`}) without a result${stderrTail ? `: ${stderrTail.trim().split('\n').slice(-3).join(' | ')}` : ''}`,
        };
        killProcessesNaming(request.workDir);
        void goneNaming(request.workDir)
          .then(() => rm(request.workDir, { recursive: true, force: true }))
          .catch(() => undefined)
          .then(() => resolve(outcome!));
      });
    });
  }

  return {
    run,
    killAll: () => {
      for (const kill of running) kill();
    },
  };
}

/**
 * The worker's environment: the daemon's, without the daemon's small young generation (the
 * systemd unit's NODE_OPTIONS, docs/scaling.md): Lighthouse allocates fast and briefly, in its own
 * process that ends with the audit, where V8's default suits it.
 */
function workerEnv(): NodeJS.ProcessEnv {
  const options = (process.env.NODE_OPTIONS ?? '')
    .split(/\s+/)
    .filter((option) => option && !option.startsWith('--max-semi-space-size'));
  return { ...process.env, NODE_OPTIONS: options.join(' ') };
}
