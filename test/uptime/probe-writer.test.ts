import { describe, expect, it } from 'vitest';
import { createProbeWriter } from '../../src/uptime/probe-writer.js';
import { createHourlyRollups } from '../../src/uptime/rollups.js';
import type { BucketRow, BufferedStatus, ProbeRow, UptimeRepository } from '../../src/uptime/uptime.repository.js';
import { createCapturedLogger } from '../support/log-capture.js';

/** A promise and the functions that settle it, for writes a test lets finish when it chooses. */
function deferred() {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((yes, no) => ((resolve = yes), (reject = no)));
  return { promise, resolve, reject };
}

const probe = (siteId: string, at: number): ProbeRow => ({
  siteId,
  at,
  up: true,
  httpStatus: 200,
  responseMs: 100,
  cause: null,
  certificateExpiresAt: null,
});

/** A repository whose batch writes wait until the test settles them, one by one. */
function slowRepository() {
  const writes: { rows: ProbeRow[]; statuses: BufferedStatus[]; done: ReturnType<typeof deferred> }[] = [];
  const repository = {
    insertProbes(rows: readonly ProbeRow[], statuses: readonly BufferedStatus[] = []) {
      const done = deferred();
      writes.push({ rows: [...rows], statuses: [...statuses], done });
      return done.promise;
    },
  } as unknown as UptimeRepository;
  return { repository, writes };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('the probe writer', () => {
  it('writes one batch at a time, and the flushes asked for meanwhile as one batch after it', async () => {
    const { repository, writes } = slowRepository();
    const writer = createProbeWriter({ repository, logger: createCapturedLogger().logger });
    writer.add(probe('site_a', 1));
    const first = writer.flush();
    await settle();
    expect(writes).toHaveLength(1);

    writer.add(probe('site_a', 2));
    const second = writer.flush();
    writer.add(probe('site_b', 3));
    writer.addStatus({ siteId: 'site_b', status: 'up', since: 3 });
    const third = writer.flush();
    await settle();
    expect(writes).toHaveLength(1);
    expect(second).toBe(third);

    writes[0]!.done.resolve();
    expect(await first).toBe(1);
    await settle();
    expect(writes).toHaveLength(2);
    expect(writes[1]!.rows.map((row) => row.at)).toEqual([2, 3]);
    expect(writes[1]!.statuses).toEqual([{ siteId: 'site_b', status: 'up', since: 3 }]);
    writes[1]!.done.resolve();
    expect(await second).toBe(2);
    expect(await writer.flush()).toBe(0);
    expect(writes).toHaveLength(2);
  });

  it('has a flush wait for the one writing before it (a stop’s last flush), and logs a batch that fails', async () => {
    const { repository, writes } = slowRepository();
    const logs = createCapturedLogger();
    const writer = createProbeWriter({ repository, logger: logs.logger });
    writer.add(probe('site_a', 1));
    const writing = writer.flush();
    await settle();
    let last = false;
    const stopping = writer.flush().then(() => (last = true));
    await settle();
    expect(last).toBe(false);
    writes[0]!.done.reject(new Error('disk full'));
    expect(await writing).toBe(0);
    await stopping;
    expect(last).toBe(true);
    expect(logs.records()).toEqual([
      expect.objectContaining({ msg: 'writing uptime probes failed', probes: 1, err: expect.anything() }),
    ]);
  });
});

describe('the hourly roll-ups', () => {
  it('count an hour being written among the open ones until its write is done', async () => {
    const hour = 3_600_000;
    const done = deferred();
    const written: BucketRow[][] = [];
    const repository = {
      mark: () => Promise.resolve(0),
      addHourly: (rows: readonly BucketRow[]) => {
        written.push([...rows]);
        return done.promise;
      },
    } as unknown as UptimeRepository;
    const rollups = createHourlyRollups({ repository });
    rollups.add('site_a', 10, true, 100);
    rollups.add('site_a', hour + 10, false, null);
    const closing = rollups.closeBefore(hour);
    await settle();
    expect(written).toEqual([[expect.objectContaining({ bucket: 0, up: 1 })]]);
    expect(rollups.openBuckets('site_a').map((bucket) => bucket.bucket)).toEqual([0, hour]);
    done.resolve();
    expect(await closing).toBe(1);
    expect(rollups.openBuckets('site_a').map((bucket) => bucket.bucket)).toEqual([hour]);
  });
});
