import { afterEach, describe, expect, it } from 'vitest';
import { usersProblems } from '../../src/users/users.errors.js';
import { isProblem } from '../../src/shared/errors.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const PASSWORD = 'a long enough password';

describe('creating users', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('answers user-exists to the second of two requests for one name at once, not a database error', async () => {
    t = createTestApp();
    // Both pass the name check before either is written: the password hash is awaited between the two.
    const results = await Promise.allSettled([
      t.services.users.create('twin', PASSWORD, 'viewer'),
      t.services.users.create('twin', PASSWORD, 'viewer'),
    ]);
    expect(results.map((result) => result.status).sort()).toEqual(['fulfilled', 'rejected']);
    const refused = results.find((result) => result.status === 'rejected');
    expect(isProblem(refused?.reason, usersProblems.exists)).toBe(true);
    expect((await t.services.users.list()).filter((user) => user.username === 'twin')).toHaveLength(1);
  });
});
