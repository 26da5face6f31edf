/**
 * Does a burst of wrong sign-ins stall the daemon's file reads? (issue 33). 120 wrong passwords at
 * once, each from its own address (so the sign-in throttle lets every one through: the worst case
 * for the hashing pool), while a loop reads a small file and times each read. Twice: with the
 * hashing pool unbounded (every scrypt on libuv's threadpool at once, as before) and with the
 * daemon's pool (one hash at a time, 16 waiting, the rest refused).
 *
 *   node --import tsx bench/lab/sign-in-stall.ts        # BENCH_ATTEMPTS=120
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/db/database.js';
import { sqliteStateOf } from '../../src/db/state-db.js';
import { systemClock } from '../../src/shared/clock.js';
import { createLoggedEvents, createLogger } from '../../src/shared/logger.js';
import { scrypt } from 'node:crypto';
import { createPasswordHasher, type Derive, type PasswordHasher } from '../../src/users/passwords.js';
import { createUsersRepository, createUsersService } from '../../src/users/index.js';

const ATTEMPTS = Number(process.env.BENCH_ATTEMPTS ?? 120);
const file = join(mkdtempSync(join(tmpdir(), 'sign-in-stall-')), 'small.json');
writeFileSync(file, JSON.stringify({ hello: 'world' }));

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

async function run(label: string, hasher: PasswordHasher) {
  const database = openDatabase(':memory:');
  const users = createUsersService({
    repository: createUsersRepository(sqliteStateOf(database)),
    clock: systemClock,
    events: createLoggedEvents(createLogger({ level: 'silent' })),
    hasher,
  });
  await users.create('alice', 'correct horse battery staple');
  // Baseline reads.
  const idle: number[] = [];
  for (let i = 0; i < 50; i++) {
    const started = performance.now();
    await readFile(file);
    idle.push(performance.now() - started);
  }
  const reads: number[] = [];
  let done = false;
  const reader = (async () => {
    while (!done) {
      const started = performance.now();
      await readFile(file);
      reads.push(performance.now() - started);
    }
  })();
  const started = performance.now();
  const outcomes = await Promise.allSettled(
    Array.from({ length: ATTEMPTS }, (_, i) => users.signIn('alice', `wrong password ${i}`, `198.51.100.${i % 250}`)),
  );
  const burstMs = performance.now() - started;
  done = true;
  await reader;
  const kinds = new Map<string, number>();
  for (const outcome of outcomes) {
    const name =
      outcome.status === 'rejected'
        ? ((outcome.reason as { problem?: { name: string } }).problem?.name ?? 'error')
        : 'signed in';
    kinds.set(name, (kinds.get(name) ?? 0) + 1);
  }
  const sorted = [...reads].sort((a, b) => a - b);
  const idleSorted = [...idle].sort((a, b) => a - b);
  console.log(
    `${label}: ${ATTEMPTS} wrong sign-ins in ${(burstMs / 1000).toFixed(2)} s (${[...kinds].map(([k, n]) => `${n} ${k}`).join(', ')}); ` +
      `file reads during the burst: ${reads.length}, median ${percentile(sorted, 0.5).toFixed(1)} ms, p99 ${percentile(sorted, 0.99).toFixed(1)} ms, max ${sorted.at(-1)!.toFixed(1)} ms ` +
      `(idle median ${percentile(idleSorted, 0.5).toFixed(2)} ms)`,
  );
  database.close();
}

/** node's scrypt on libuv's threadpool, as the daemon hashed before its pool had a thread of its own. */
const onThreadpool: Derive = (password, salt, parameters) =>
  new Promise((resolve, reject) =>
    scrypt(password, salt, 32, { ...parameters, maxmem: 256 * parameters.N * parameters.r }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
await run(
  'unbounded (before)',
  createPasswordHasher({ concurrency: Number.POSITIVE_INFINITY, maxWaiting: 0, derive: onThreadpool }),
);
await run('pool of 1, 16 waiting (now)', createPasswordHasher());
