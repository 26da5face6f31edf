import { Worker } from 'node:worker_threads';
import type { ScryptOptions } from 'node:crypto';

/**
 * How much lower than the daemon's other threads a hash runs while others wait for their turn
 * (Linux nice, 0–19): a burst of sign-ins. On a two-core VPS a burst keeps one core hashing; at the
 * same priority the event loop waits its turn behind it (and behind every other process) and each
 * answer is late. Lower, the burst's hashing takes what the loop leaves: its sign-ins wait longer,
 * every other request does not. A hash nobody waits behind (a user's sign-in, a new password) runs
 * at the daemon's own priority: not slowed down on a busy machine. A thread's nice cannot be raised
 * back without privileges, so each priority has its own thread.
 */
export const HASH_THREAD_NICE = 10;

// Plain CommonJS, evaluated as the worker's source: no file to find, from src/ under tsx or from dist/.
const source = (nice: number) => `
const { parentPort } = require('node:worker_threads');
const { scryptSync } = require('node:crypto');
const { readlinkSync } = require('node:fs');
const { setPriority } = require('node:os');
if (${nice} > 0)
  try {
    // /proc/thread-self is this thread's /proc/PID/task/TID; setpriority on a TID sets that thread's nice alone.
    setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), ${nice});
  } catch {
    // not Linux, or not allowed: the hashing runs at the daemon's priority
  }
parentPort.on('message', ({ id, password, salt, keyBytes, options }) => {
  try {
    parentPort.postMessage({ id, key: scryptSync(password, salt, keyBytes, options) });
  } catch (error) {
    parentPort.postMessage({ id, error: String((error && error.message) || error) });
  }
});
`;

type Pending = { resolve: (key: Buffer) => void; reject: (error: Error) => void };

/**
 * scrypt on a thread of its own, at `nice` (0: the daemon's priority), rather than on libuv's
 * threadpool, which file reads and zlib share. The hashing pool (passwords.ts) decides how many
 * hashes are asked for at once. Started on the first hash; it keeps no process alive.
 */
export function createHashThread({ nice = 0 }: { nice?: number } = {}) {
  let worker: Worker | null = null;
  let nextId = 1;
  const pending = new Map<number, Pending>();

  function failAll(error: Error): void {
    for (const waiting of pending.values()) waiting.reject(error);
    pending.clear();
    worker = null;
  }

  function thread(): Worker {
    if (worker) return worker;
    const started = new Worker(source(nice), { eval: true });
    // Kept alive only while a hash is asked for (a CLI command waits for its hash, then exits).
    started.unref();
    started.on('message', ({ id, key, error }: { id: number; key?: Uint8Array; error?: string }) => {
      const waiting = pending.get(id);
      pending.delete(id);
      if (pending.size === 0) started.unref();
      if (!waiting) return;
      if (key) waiting.resolve(Buffer.from(key.buffer, key.byteOffset, key.byteLength));
      else waiting.reject(new Error(error ?? 'scrypt failed'));
    });
    // A thread that died (out of memory) fails what it held; the next hash starts another.
    started.on('error', (error) => {
      if (worker === started) failAll(error);
    });
    started.on('exit', (code) => {
      if (worker === started) failAll(new Error(`the password hashing thread exited (${code})`));
    });
    worker = started;
    return started;
  }

  return {
    derive(password: string, salt: Buffer, keyBytes: number, options: ScryptOptions): Promise<Buffer> {
      return new Promise((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { resolve, reject });
        const running = thread();
        running.ref();
        running.postMessage({ id, password, salt, keyBytes, options });
      });
    },
    /** Ends the thread (tests). */
    async stop(): Promise<void> {
      const running = worker;
      worker = null;
      if (running) await running.terminate();
      failAll(new Error('the password hashing thread was stopped'));
    },
  };
}
