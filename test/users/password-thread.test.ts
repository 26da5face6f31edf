import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createHashThread, HASH_THREAD_NICE } from '../../src/users/password-worker.js';
import { passwordHasher } from '../../src/users/passwords.js';

/** This process's threads' nice values (Linux: field 19 of /proc/self/task/TID/stat). */
function threadNices(): number[] {
  return readdirSync('/proc/self/task').flatMap((id) => {
    try {
      const stat = readFileSync(`/proc/self/task/${id}/stat`, 'utf8');
      return [Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])];
    } catch {
      return []; // the thread ended meanwhile
    }
  });
}

describe('the password hashing thread', () => {
  it('hashes alone at the daemon’s priority, and a burst’s waiting hashes on a thread below it', async () => {
    const stored = await passwordHasher.hash('correct horse battery staple');
    await expect(passwordHasher.verify('correct horse battery staple', stored)).resolves.toBe(true);
    // Nobody waited: no thread runs below the daemon's priority.
    expect(threadNices().every((nice) => nice === 0)).toBe(true);

    // Three at once: the one in the middle had another waiting behind it.
    const burst = await Promise.all(
      ['correct horse battery staple', 'wrong 1', 'wrong 2'].map((password) => passwordHasher.verify(password, stored)),
    );
    expect(burst).toEqual([true, false, false]);
    const nices = threadNices();
    expect(nices[0]).toBe(0); // the main thread keeps its priority
    expect(nices).toContain(HASH_THREAD_NICE);
  });

  it('gives the same key as scrypt, fails what a stopped thread held, and starts another for the next hash', async () => {
    const { scryptSync } = await import('node:crypto');
    const thread = createHashThread({ nice: HASH_THREAD_NICE });
    const salt = Buffer.from('0123456789abcdef');
    const options = { N: 1024, r: 8, p: 1 };
    const key = await thread.derive('a password', salt, 32, options);
    expect(key.equals(scryptSync('a password', salt, 32, options))).toBe(true);

    const held = thread.derive('another password', salt, 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
    await thread.stop();
    await expect(held).rejects.toThrow(/stopped|exited/);
    await expect(thread.derive('a password', salt, 32, options)).resolves.toEqual(key);
    await thread.stop();
  });
});
