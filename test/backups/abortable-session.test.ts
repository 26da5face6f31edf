import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { abortableSession, JobAborted } from '../../src/backups/abortable-session.js';
import type { WordPressSession } from '../../src/wordpress/wordpress-client.js';

const FILE_ROUTE = 'sitewarden/v1/backup/file';
const RANGE = { maxBytes: 4096 };
const tick = (ms = 5) => new Promise((resolve) => setTimeout(resolve, ms));

async function* bytes(count: number) {
  for (let n = 0; n < count; n++) yield Buffer.alloc(1024, n);
}

/** A session whose streamed calls answer after `delayMs` with a body of four chunks; `bodies` keeps each body made. */
function streamingSession(delayMs = 0) {
  const bodies: Readable[] = [];
  const session = {
    callStream: async () => {
      await tick(delayMs);
      const body = Readable.from(bytes(4), { objectMode: false });
      bodies.push(body);
      return body;
    },
  } as unknown as WordPressSession;
  return { session, bodies };
}

/** Reads a body the way a file range is stored: through a generator, once the store has opened its file. */
async function readThrough(body: Readable): Promise<number> {
  async function* tapped(source: Readable) {
    for await (const chunk of source) yield chunk as Buffer;
  }
  let size = 0;
  for await (const chunk of Readable.from(tapped(body))) size += (chunk as Buffer).length;
  return size;
}

describe('abortableSession', () => {
  it('fails a body aborted before its reader starts in that reader, not in the process', async () => {
    const controller = new AbortController();
    const { session } = streamingSession();
    const body = await abortableSession(session, controller.signal).callStream(FILE_ROUTE, RANGE);
    // The abort lands while the reader waits (the store opening its temporary file): no listener is on the body yet.
    controller.abort();
    await tick(20);
    // An 'error' event with no listener would have been an uncaught exception here (vitest fails the run on one).
    await expect(readThrough(body)).rejects.toBeInstanceOf(JobAborted);
  });

  it('fails a body being read when the abort comes, and lets one read to its end without an abort', async () => {
    const controller = new AbortController();
    const { session } = streamingSession();
    const aborted = abortableSession(session, controller.signal);
    expect(await readThrough(await aborted.callStream(FILE_ROUTE, RANGE))).toBe(4096);

    const body = await aborted.callStream(FILE_ROUTE, RANGE);
    const reading = readThrough(body);
    controller.abort();
    await expect(reading).rejects.toBeInstanceOf(JobAborted);
  });

  it('rejects a call the abort overtakes, and destroys the body that arrives after it unread', async () => {
    const controller = new AbortController();
    const { session, bodies } = streamingSession(30);
    const pending = abortableSession(session, controller.signal).callStream(FILE_ROUTE, RANGE);
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(JobAborted);
    await tick(60);
    expect(bodies).toHaveLength(1);
    expect(bodies[0]!.destroyed).toBe(true);
    // And no new call starts once aborted.
    await expect(abortableSession(session, controller.signal).callStream(FILE_ROUTE, RANGE)).rejects.toBeInstanceOf(
      JobAborted,
    );
    expect(bodies).toHaveLength(1);
  });
});
