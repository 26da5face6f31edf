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
