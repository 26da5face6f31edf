import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { signIn } from './signed-in.js';
import { endOf, openEvents } from './event-streams.js';

describe('signing out ends the session’s live event streams', () => {
  let t: TestApp;
  beforeEach(() => {
    t = createTestApp();
  });
  afterEach(() => t.close());

  it('closes the stream of the session that signed out, and only that one', async () => {
    const alice = await signIn(t, 'alice');
    const bob = await signIn(t, 'bob');
    const alicesStream = await openEvents(alice);
    const bobsStream = await openEvents(bob);
    expect(await endOf(alicesStream, 300)).toBe('open');

    const signedOut = await alice.post('/sign-out', {});
    expect(signedOut.status).toBe(303);
    expect(await endOf(alicesStream, 5_000)).toBe('ended');
    // The session is gone for the stream's URL too, and bob's stream goes on.
    expect((await alice.get('/events')).status).toBe(303);
    expect(await endOf(bobsStream, 300)).toBe('open');
    await bobsStream.cancel();
  });

  it('closes every stream of a user whose password is reset', async () => {
    const alice = await signIn(t, 'alice');
    const streams = [await openEvents(alice), await openEvents(alice)];
    await t.services.users.resetPassword('alice');
    for (const stream of streams) expect(await endOf(stream, 5_000)).toBe('ended');
  });
});
