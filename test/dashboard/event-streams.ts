import { expect } from 'vitest';
import type { SignedIn } from './signed-in.js';

/**
 * Reads an event stream until it ends: 'ended' when it finished (its last chunk read), 'cut' when it errored (a
 * browser reports that as a network error), or 'open' if it is still open after `ms`.
 */
export async function endOf(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  ms: number,
): Promise<'ended' | 'cut' | 'open'> {
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

export async function openEvents(user: SignedIn) {
  const response = await user.get('/events');
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  return response.body!.getReader();
}
