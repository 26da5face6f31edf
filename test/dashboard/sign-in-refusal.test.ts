import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFakeClock } from '../../src/shared/clock.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const PASSWORD = 'correct horse battery staple';

/** A sign-in through the form, from a browser that takes gzip. */
function signIn(t: TestApp, password: string) {
  return t.app.request('/sign-in', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'accept-encoding': 'gzip, deflate' },
    body: new URLSearchParams({ username: 'alice', password, next: '/' }).toString(),
  });
}

describe('a refused sign-in’s answer (issue 33: the cheap path under attack)', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = createTestApp({ clock: createFakeClock(new Date('2026-03-01T10:00:00Z')) });
    await t.services.users.create('alice', PASSWORD);
  });
  afterEach(() => t.close());

  it('is not gzipped (wrong password, then too many), while the sign-in page is', async () => {
    for (let i = 0; i < 5; i++) {
      const wrong = await signIn(t, `wrong guess ${i}`);
      expect(wrong.status).toBe(401);
      expect(wrong.headers.get('content-encoding')).toBeNull();
      expect(wrong.headers.get('cache-control')).toBe('no-store, no-transform');
      expect(await wrong.text()).toContain('Wrong user name or password.');
    }
    const limited = await signIn(t, PASSWORD);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('content-encoding')).toBeNull();
    expect(await limited.text()).toMatch(/too many failed sign-ins; try again in \d+ s/);

    const form = await t.app.request('/sign-in', { headers: { 'accept-encoding': 'gzip, deflate' } });
    expect(form.status).toBe(200);
    expect(form.headers.get('content-encoding')).toBe('gzip');
  });
});

describe('a sign-in while the hashing pool is full', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = createTestApp({ clock: createFakeClock(new Date('2026-03-01T10:00:00Z')) });
    await t.services.users.create('alice', PASSWORD);
  });
  afterEach(() => t.close());

  it('is refused 429 sign-in-busy before its body is read (a body that never ends still gets its answer)', async () => {
    // Fill the pool: one hash running and 16 waiting (the defaults), each for a name of its own (within the per-address allowance).
    const filling = Array.from({ length: 17 }, (_, i) =>
      t.app.request('/sign-in', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ username: `nobody-${i}`, password: `wrong ${i}` }).toString(),
      }),
    );
    await expect.poll(() => t.services.users.signInBusy()?.problem.name).toBe('sign-in-busy');
    // A body that never ends: a route that read it first would never answer.
    const endless = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('username=alice&password='));
      },
    });
    const refused = await t.app.request('/sign-in', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: endless,
      duplex: 'half',
    });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused.text()).toMatch(/too many sign-ins at once; try again in \d+ s/);
    // The pool's own sign-ins end as they would have: every one a wrong password.
    expect((await Promise.all(filling)).map((answer) => answer.status)).toEqual(Array(17).fill(401));
  });
});
