import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isProblem } from '../../src/shared/errors.js';
import { createPasswordHasher, type Derive, type ScryptParameters } from '../../src/users/passwords.js';
import { usersProblems } from '../../src/users/index.js';

/** A derive that waits until the test lets it finish, and counts how many run at once. */
function heldDerive() {
  const held: (() => void)[] = [];
  const state = { running: 0, mostAtOnce: 0, started: 0 };
  const derive: Derive = async (password, salt, parameters: ScryptParameters) => {
    state.started++;
    state.running++;
    state.mostAtOnce = Math.max(state.mostAtOnce, state.running);
    await new Promise<void>((resolve) => held.push(resolve));
    state.running--;
    return createHash('sha256').update(`${parameters.N}:${password}`).update(salt).digest();
  };
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return { derive, held, state, settle };
}

describe('the password hashing pool', () => {
  it('runs at most `concurrency` hashes at once, queues a few, and refuses beyond them with sign-in-busy', async () => {
    const { derive, held, state, settle } = heldDerive();
    const hasher = createPasswordHasher({ concurrency: 1, maxWaiting: 2, derive });
    const first = hasher.hash('password one!!');
    const queued = [hasher.hash('password two!!'), hasher.hash('password three')];
    await settle();
    expect(state.started).toBe(1);
    expect({ running: hasher.running, waiting: hasher.waiting }).toEqual({ running: 1, waiting: 2 });

    const refused = await hasher
      .verify('password four', 'scrypt$32768$8$1$c2FsdA$a2V5')
      .catch((error: unknown) => error);
    expect(isProblem(refused, usersProblems.busy)).toBe(true);
    expect((refused as { extensions: { retryAfter: number } }).extensions.retryAfter).toBeGreaterThanOrEqual(1);
    expect(state.started).toBe(1); // refused without hashing

    // Each finished hash hands its turn to the next; never two at once.
    for (let i = 0; i < 3; i++) {
      held.shift()!();
      await settle();
    }
    const hashes = await Promise.all([first, ...queued]);
    expect(hashes).toHaveLength(3);
    expect(state.mostAtOnce).toBe(1);
    expect(state.started).toBe(3);
    expect({ running: hasher.running, waiting: hasher.waiting }).toEqual({ running: 0, waiting: 0 });
    // The pool frees up: a later hash runs.
    const later = hasher.verify('password one!!', hashes[0]!);
    await settle();
    held.shift()!();
    expect(await later).toBe(true);
  });

  it('lets `concurrency` hashes run side by side', async () => {
    const { derive, held, state, settle } = heldDerive();
    const hasher = createPasswordHasher({ concurrency: 2, maxWaiting: 10, derive });
    const all = Array.from({ length: 5 }, (_, i) => hasher.hash(`password number ${i}`));
    await settle();
    expect(state.started).toBe(2);
    while (held.length > 0 || hasher.running > 0) {
      held.shift()?.();
      await settle();
    }
    await Promise.all(all);
    expect(state.mostAtOnce).toBe(2);
    expect(state.started).toBe(5);
  });

  it('hashes a password of nobody with the same scrypt cost as a stored hash (scrypt itself, once)', async () => {
    const calls: ScryptParameters[] = [];
    const counting: Derive = async (password, salt, parameters) => {
      calls.push(parameters);
      return createHash('sha256').update(password).update(salt).digest();
    };
    const hasher = createPasswordHasher({ derive: counting });
    const stored = await hasher.hash('correct horse battery staple');
    calls.length = 0;
    expect(await hasher.verify('wrong password here', stored)).toBe(false);
    expect(await hasher.verifyNobody('wrong password here')).toBe(false);
    expect(calls).toHaveLength(2);
    expect(calls[1]).toEqual(calls[0]);
    expect(calls[0]).toEqual({ N: 2 ** 15, r: 8, p: 1 });
  });
});
