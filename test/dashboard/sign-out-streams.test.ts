import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { signIn, type SignedIn } from './signed-in.js';

/**
 * Reads an event stream until it ends: 'ended' when it finished (its last chunk read), 'cut' when it errored (a
 * browser reports that as a network error), or 'open' if it is still open after `ms`.
 */
async function endOf(reader: ReadableStreamDefaultReader<Uint8Array>, ms: number): Promise<'ended' | 'cut' | 'open'> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const next = await Promise.race([
      reader.read().then(
        (chunk) => (chunk.done ? 'ended' : 'data'),
        () => 'cut' as const,
      ),
      new Promise<'open'>((resolve) => setTimeout(() => resolve('open'), Math.max(1, deadline - Date.now()))),
    ]);
    if (next !== 'data') return next;
  }
  return 'open';
}

async function openEvents(user: SignedIn) {
  const response = await user.get('/events');
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  return response.body!.getReader();
}

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
