import { sqliteStateOf } from '../../src/db/state-db.js';
import { openDatabase } from '../../src/db/database.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STREAM_SESSION_CHECK_MS } from '../../src/dashboard/session.js';
import { usersCommand } from '../../src/users/users.cli.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { signIn } from './signed-in.js';
import { endOf, openEvents } from './event-streams.js';

/** Two session checks, and a second of slack for a loaded machine. */
const WITHIN = STREAM_SESSION_CHECK_MS * 2 + 1_000;

/**
 * `sitewarden users set-role` and `users reset-password` write the database from another process:
 * the daemon hears no event, yet the user's open event streams must end (finished, not cut), as
 * sign-out ends them. Here the CLI's own code runs on its own connection to the daemon's database file.
 */
describe('a change made by the CLI (another connection) ends the user’s open event streams', () => {
  let dataDir: string;
  let t: TestApp;
  const cli = (args: string[]) =>
    usersCommand({
      args,
      open: async () => sqliteStateOf(openDatabase(join(dataDir, 'sitewarden.db'), { migrate: false })),
      out: () => undefined,
    });

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'sw-stream-cli-'));
    t = createTestApp({ databasePath: join(dataDir, 'sitewarden.db') });
  });
  afterEach(async () => {
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('users set-role: the user’s streams end, another user’s go on', async () => {
    const alice = await signIn(t, 'alice');
    const bob = await signIn(t, 'bob');
    const alicesStreams = [await openEvents(alice), await openEvents(alice)];
    const bobsStream = await openEvents(bob);
    expect(await endOf(alicesStreams[0]!, 300)).toBe('open');

    expect(await cli(['set-role', 'alice', 'viewer'])).toBe(0);
    for (const stream of alicesStreams) expect(await endOf(stream, WITHIN)).toBe('ended');
    expect((await alice.get('/events')).status).toBe(303); // signed out for good
    expect(await endOf(bobsStream, 300)).toBe('open');
    await bobsStream.cancel();
  });

  it('users reset-password: the user’s stream ends', async () => {
    const alice = await signIn(t, 'alice');
    const stream = await openEvents(alice);
    expect(await cli(['reset-password', 'alice'])).toBe(0);
    expect(await endOf(stream, WITHIN)).toBe('ended');
  });
});
