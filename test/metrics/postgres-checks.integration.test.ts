import { describe, expect, inject, it } from 'vitest';
import { openStateDatabase } from '../../src/db/state-db.js';
import { postgresChecks } from '../../src/metrics/readiness.js';
import { createFakeClock } from '../../src/shared/clock.js';
import { createTestDatabase } from '../support/postgres.js';

/** Cluster mode's database checks (/healthz, /readyz): asked in the background, answered at once. */
describe('the PostgreSQL checks', () => {
  it('pass while PostgreSQL takes writes; fail once it is gone, or when its last answer is too old', async () => {
    const database = await createTestDatabase(inject('postgresUrl'), 'postgres-checks');
    const state = await openStateDatabase({ url: database.url, sqlitePath: '' });
    const clock = createFakeClock(new Date('2026-11-29T10:00:00Z'));
    const checks = postgresChecks(state, clock);
    try {
      await checks.asked;
      expect(checks.checkDatabase()).toBe(true);
      expect(() => checks.checkWritable()).not.toThrow();
      // No answer for longer than three rounds: not ready, whatever the last one said.
      clock.advance(16_000);
      expect(checks.checkDatabase()).toBe(false);
      expect(() => checks.checkWritable()).toThrow('PostgreSQL has not answered lately');
    } finally {
      checks.stop();
      await state.close();
      await database.drop();
    }
    // A database that cannot be reached fails the first answer.
    const gone = postgresChecks(state, clock);
    await gone.asked;
    gone.stop();
    expect(gone.checkDatabase()).toBe(false);
    expect(() => gone.checkWritable()).toThrow();
  });
});
