import { randomBytes, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { createHashThread, HASH_THREAD_NICE } from './password-worker.js';
import type { AppError } from '../shared/errors.js';
import { usersProblems } from './users.errors.js';

/** scrypt's cost today (N = 2^15, 32 MiB per hash); stored with each hash so it can be raised later. */
const CURRENT = { N: 2 ** 15, r: 8, p: 1 };
const KEY_BYTES = 32;
/** Hashes computed at once, and hashes waiting for a turn before more are refused. */
const DEFAULT_CONCURRENCY = 1;
const DEFAULT_MAX_WAITING = 16;

export type ScryptParameters = Required<Pick<ScryptOptions, 'N' | 'r' | 'p'>>;
/** `waiting`: the hashes waiting for a turn behind this one (a burst of sign-ins when above 0). */
export type Derive = (
  password: string,
  salt: Buffer,
  parameters: ScryptParameters,
  load: { waiting: number },
) => Promise<Buffer>;

/**
 * scrypt on a thread of its own (password-worker.ts): at the daemon's priority, or below it while
 * other hashes wait (a burst), so that a burst's hashing does not take the event loop's core.
 */
const hashThreads = { own: createHashThread(), burst: createHashThread({ nice: HASH_THREAD_NICE }) };
const scryptDerive: Derive = (password, salt, parameters, { waiting }) =>
  (waiting > 0 ? hashThreads.burst : hashThreads.own).derive(password, salt, KEY_BYTES, {
    ...parameters,
    maxmem: 256 * parameters.N * parameters.r,
  });

/**
 * A stored hash no password opens (its key is random), of today's cost: checking a password
 * against it is the same work as against a user's, so an unknown user name costs the same time.
 */
const DUMMY_HASH = [
  'scrypt',
  CURRENT.N,
  CURRENT.r,
  CURRENT.p,
  randomBytes(16).toString('base64url'),
  randomBytes(KEY_BYTES).toString('base64url'),
].join('$');

export interface PasswordHasher {
  /** `scrypt$N$r$p$salt$hash`: a per-user random salt and the parameters it was hashed with. */
  hash(password: string): Promise<string>;
  verify(password: string, stored: string): Promise<boolean>;
  /** The work of a `verify` against a user's hash, for a user name that has none; always false. */
  verifyNobody(password: string): Promise<false>;
  /**
   * The refusal a hash asked for now would get (`sign-in-busy`: every turn taken and the queue full), or
   * undefined: lets a sign-in be refused before its body is read or its user looked up.
   */
  busy(): AppError | undefined;
  /** Hashes being computed and waiting now. */
  readonly running: number;
  readonly waiting: number;
}

/**
 * Password hashing in a bounded pool. Every hash is 32 MiB and ~0.1 s of a core: a burst of
 * sign-ins hashed all at once would take every core (and, on libuv's threadpool, every thread file
 * reads and zlib need) for seconds. At most `concurrency` hashes run at once, on a thread of their
 * own below the event loop's priority (password-worker.ts); at most `maxWaiting` wait for a turn,
 * and beyond them a hash is refused at once (`sign-in-busy`, 429 with Retry-After) rather than
 * queued without end.
 */
export function createPasswordHasher({
  concurrency = DEFAULT_CONCURRENCY,
  maxWaiting = DEFAULT_MAX_WAITING,
  derive = scryptDerive,
}: { concurrency?: number; maxWaiting?: number; derive?: Derive } = {}): PasswordHasher {
  let running = 0;
  const queue: (() => void)[] = [];
  /** How long one hash took lately (ms), for Retry-After. */
  let typicalMs = 100;

  function busy(): AppError | undefined {
    if (running < concurrency || queue.length < maxWaiting) return undefined;
    const retryAfter = Math.max(1, Math.ceil(((queue.length + 1) * typicalMs) / concurrency / 1000));
    return usersProblems.busy.create(`too many sign-ins at once; try again in ${retryAfter} s`, { retryAfter });
  }

  async function inTurn<T>(work: (waiting: number) => Promise<T>): Promise<T> {
    if (running < concurrency) running++;
    else {
      const refused = busy();
      if (refused) throw refused;
      // The finishing hash hands its turn over: `running` stays as it is.
      await new Promise<void>((resolve) => queue.push(resolve));
    }
    const startedAt = performance.now();
    try {
      return await work(queue.length);
    } finally {
      typicalMs = (typicalMs * 3 + (performance.now() - startedAt)) / 4;
      const next = queue.shift();
      if (next) next();
      else running--;
    }
  }

  async function verify(password: string, stored: string): Promise<boolean> {
    const [kind, n, r, p, salt, hash] = stored.split('$');
    if (kind !== 'scrypt' || !salt || !hash) return false;
    const expected = Buffer.from(hash, 'base64url');
    const key = await inTurn((waiting) =>
      derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) }, { waiting }),
    );
    return key.length === expected.length && timingSafeEqual(key, expected);
  }

  return {
    busy,
    async hash(password) {
      const salt = randomBytes(16);
      const key = await inTurn((waiting) => derive(password, salt, CURRENT, { waiting }));
      return ['scrypt', CURRENT.N, CURRENT.r, CURRENT.p, salt.toString('base64url'), key.toString('base64url')].join(
        '$',
      );
    },
    verify,
    async verifyNobody(password) {
      await verify(password, DUMMY_HASH);
      return false;
    },
    get running() {
      return running;
    },
    get waiting() {
      return queue.length;
    },
  };
}

/** The process's one pool: every password hash of the daemon (and of a CLI command) goes through it. */
export const passwordHasher = createPasswordHasher();

export const verifyPassword = (password: string, stored: string): Promise<boolean> =>
  passwordHasher.verify(password, stored);

/** A password for a generated account: 20 characters of base64url (120 bits). */
export const randomPassword = (): string => randomBytes(15).toString('base64url');
