import { afterEach, describe, expect, it } from 'vitest';
import type { StateDatabase } from '../../src/db/state-db.js';
import { createFakeClock } from '../../src/shared/clock.js';
import { createShardLeases, shardOf, UPTIME_SHARDS, type ShardLeases } from '../../src/uptime/uptime-leases.js';
import { stateDatabaseFor } from '../support/dialects.js';

/**
 * Uptime shard leases (cluster mode, src/uptime/uptime-leases.ts) on the run's PostgreSQL, the workers
 * in this process on one fake clock: fair shares, a dead worker's shards taken after its lease, a
 * stopped worker's given back at once, and claims that a lease must outlast. The worker processes are
 * in uptime-shards.integration.test.ts.
 */
const LEASE_MS = 15_000;
const MARGIN_MS = 1_000;

describe('uptime shard leases on PostgreSQL', () => {
  const state = stateDatabaseFor('postgres', 'uptime-leases');
  const clock = createFakeClock(new Date('2026-11-28T10:00:00Z'));
  const workers: ShardLeases[] = [];
  afterEach(() => void (workers.length = 0));

  const worker = (id: string) => {
    const leases = createShardLeases({
      state: state(),
      workerId: id,
      clock,
      leaseMs: LEASE_MS,
      clockMarginMs: MARGIN_MS,
    });
    workers.push(leases);
    return leases;
  };
  const advance = (ms: number) => clock.set(new Date(clock.now().getTime() + ms));
  const rows = (db: StateDatabase) =>
    db.db.execute<{ shard: number; holder: string | null; claimed_until: number | null }>(
      'select shard, holder, (extract(epoch from claimed_until) * 1000)::bigint::float8 as claimed_until from uptime_shard_leases order by shard',
    );

  it('gives a lone worker every shard, then shares them fairly as a second one joins', async () => {
    const a = worker('worker-a');
    const first = await a.renew();
    expect(first.held.size).toBe(UPTIME_SHARDS);
    expect(first.gained.every((gain) => gain.resumeFrom === null)).toBe(true);

    const b = worker('worker-b');
    // B counts two workers but finds nothing free; A gives back what is beyond its half; B takes it.
    expect((await b.renew()).held.size).toBe(0);
    advance(1_000);
    const given = await a.renew();
    expect(given.held.size).toBe(UPTIME_SHARDS / 2);
    expect(given.lost).toHaveLength(UPTIME_SHARDS / 2);
    const taken = await b.renew();
    expect(taken.held.size).toBe(UPTIME_SHARDS / 2);
    expect(new Set([...a.held(), ...b.held()]).size).toBe(UPTIME_SHARDS);
    expect([...a.held()].some((shard) => b.held().has(shard))).toBe(false);
    const { rows: stored } = await rows(state());
    expect(stored.filter((row) => row.holder === 'worker-a')).toHaveLength(UPTIME_SHARDS / 2);
    expect(stored.filter((row) => row.holder === 'worker-b')).toHaveLength(UPTIME_SHARDS / 2);
  });

  it('lets the next holder of a given-back shard start where the last claim ended', async () => {
    const a = worker('worker-a');
    await a.renew();
    const until = new Date(clock.now().getTime() + 1_000);
    expect((await a.claim(until)).size).toBe(UPTIME_SHARDS);
    const b = worker('worker-b');
    await b.renew();
    advance(500);
    await a.renew();
    const taken = await b.renew();
    expect(taken.gained).toHaveLength(UPTIME_SHARDS / 2);
    expect(taken.gained.every((gain) => gain.resumeFrom?.getTime() === until.getTime())).toBe(true);
  });

  it('takes a dead worker’s shards once its lease and the clock margin have passed, from its last claim', async () => {
    const a = worker('worker-a');
    const b = worker('worker-b');
    await a.renew();
    await b.renew();
    advance(1_000);
    await a.renew();
    await b.renew();
    const lastClaim = new Date(clock.now().getTime() + 1_000);
    await a.claim(lastClaim);
    const aShards = new Set(a.held());
    // A dies: it renews no more, B renews a third of a lease apart. Until A's lease and the margin have
    // passed, B takes nothing of it.
    for (let elapsed = 0; elapsed < LEASE_MS; elapsed += LEASE_MS / 3) {
      advance(LEASE_MS / 3);
      expect((await b.renew()).gained).toEqual([]);
    }
    advance(MARGIN_MS);
    const taken = await b.renew();
    expect(new Set(taken.gained.map((gain) => gain.shard))).toEqual(aShards);
    expect(taken.gained.every((gain) => gain.resumeFrom?.getTime() === lastClaim.getTime())).toBe(true);
    expect(b.held().size).toBe(UPTIME_SHARDS);
  });

  it('claims only while a lease outlasts the claim by the margin, and a stalled worker’s lapsed shards come back to it', async () => {
    const a = worker('worker-a');
    await a.renew();
    const claimUntil = (ms: number) => a.claim(new Date(clock.now().getTime() + ms));
    expect((await claimUntil(LEASE_MS - MARGIN_MS - 1)).size).toBe(UPTIME_SHARDS);
    expect((await claimUntil(LEASE_MS - MARGIN_MS)).size).toBe(0);
    // A stalls past its lease; no one else is there, so its next renewal takes its shards back.
    const claimed = new Date(clock.now().getTime() + 1_000);
    await a.claim(claimed);
    advance(LEASE_MS + 1);
    const back = await a.renew();
    expect(back.held.size).toBe(UPTIME_SHARDS);
    expect(back.lost).toHaveLength(UPTIME_SHARDS);
    expect(back.gained.every((gain) => gain.resumeFrom?.getTime() === claimed.getTime())).toBe(true);
  });

  it('gives every shard back when a worker stops, claims kept, and forgets it among the workers', async () => {
    const a = worker('worker-a');
    await a.renew();
    const until = new Date(clock.now().getTime() + 1_000);
    await a.claim(until);
    await a.release();
    expect(a.held().size).toBe(0);
    const { rows: stored } = await rows(state());
    expect(stored.every((row) => row.holder === null && row.claimed_until === until.getTime())).toBe(true);
    const b = worker('worker-b');
    // One worker alive now: B's share is every shard, at once.
    const taken = await b.renew();
    expect(taken.held.size).toBe(UPTIME_SHARDS);
  });

  it('spreads sites over the shards', () => {
    const counts = new Array<number>(UPTIME_SHARDS).fill(0);
    for (let index = 0; index < 25_600; index++) counts[shardOf(`site_${index}`)]! += 1;
    expect(Math.min(...counts)).toBeGreaterThan(50);
    expect(Math.max(...counts)).toBeLessThan(160);
  });
});
