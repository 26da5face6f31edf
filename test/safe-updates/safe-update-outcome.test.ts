import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createJobsRepository } from '../../src/jobs/jobs.repository.js';
import type { FlowOutcome } from '../../src/safe-updates/safe-update-flow.js';
import { createRecorder, finish } from '../../src/safe-updates/safe-update-record.js';
import { createSafeUpdatesRepository } from '../../src/safe-updates/safe-updates.repository.js';
import { createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';

/**
 * A safe update tells the job runner its job's outcome and progress (issue 34: the runner is the
 * single writer of job rows): the outcome it returns as it decides, each new phase as its progress
 * and each new message as its note are what the runner writes to its job row.
 */
describe('what a safe update tells the job runner', () => {
  let t: TestApp;
  let siteId: string;
  beforeEach(() => {
    t = createTestApp();
    siteId = insertConnectedSite(t, { name: 'Alpha' });
  });
  afterEach(() => t.close());

  const safeUpdates = () => createSafeUpdatesRepository(t.state);
  let count = 0;
  /** A safe update and its job, queued, as the service writes them. */
  async function queued(): Promise<string> {
    const id = `sup_${String(++count).padStart(26, '0')}`;
    const at = t.clock.now();
    await t.services.jobs.create(
      { id, kind: 'safe-update', siteId, params: { type: 'plugin', slug: 'hello-dolly' }, createdAt: at },
      (tx) =>
        safeUpdates().insertWithJob(
          {
            id,
            siteId,
            itemType: 'plugin',
            slug: 'hello-dolly',
            status: 'queued',
            phase: 'queued',
            policy: '{}',
            createdAt: at,
          },
          tx,
        ),
    );
    return id;
  }
  /** A safe update running past its update, as the flow leaves it before deciding. */
  async function running(): Promise<string> {
    const id = await queued();
    await safeUpdates().update(id, { status: 'running', phase: 'after-check', startedAt: t.clock.now() });
    return id;
  }

  const decisions: Array<[FlowOutcome, object]> = [
    [
      { status: 'kept', reason: null, message: null },
      { state: 'succeeded', reason: null, message: null },
    ],
    [
      { status: 'rolled-back', reason: 'fatal-error', message: 'the home page fatals' },
      { state: 'failed', reason: 'rolled-back', message: 'the home page fatals' },
    ],
    [
      { status: 'rollback-failed', reason: 'http-500', message: 'still down' },
      { state: 'failed', reason: 'rollback-failed', message: 'still down' },
    ],
    [
      { status: 'failed', reason: 'site-unreachable', message: 'refused' },
      { state: 'failed', reason: 'site-unreachable', message: 'refused' },
    ],
    [
      { status: 'failed', reason: 'cancelled', message: 'cancelled on request' },
      { state: 'cancelled', reason: 'cancelled', message: 'cancelled on request' },
    ],
  ];

  it.each(decisions)('returns the outcome of a decision %j, as its job row holds it', async (decision, expected) => {
    const id = await running();
    const { outcome } = await t.services.jobs.runWithin(id, async () => finish(safeUpdates(), t.clock, id, decision));
    const row = (await safeUpdates().find(id))!;
    expect(outcome).toEqual({ ...expected, progress: { phase: 'done' }, finishedAt: row.finishedAt });
    const job = createJobsRepository({ db: t.database.db }).find(id)!;
    expect({
      state: job.state,
      reason: job.reason,
      message: job.message,
      progress: JSON.parse(job.progress) as unknown,
      finishedAt: job.finishedAt,
    }).toEqual(outcome);
  });

  it('tells each new phase as its job’s progress and each new message as its note, once', async () => {
    const id = await running();
    const told: object[] = [];
    const notes: (string | null)[] = [];
    const record = createRecorder(safeUpdates(), (await safeUpdates().find(id))!, {
      progress: (progress) => told.push(progress),
      note: (message) => notes.push(message),
    });
    await record.phase('rolling-back', { reason: 'fatal-error' });
    await record.phase('rolling-back', { message: 'the home page fatals' });
    await record.phase('restoring-backup', { message: 'the home page fatals' });
    await record.phase('backup', { message: null });
    expect(told).toEqual([{ phase: 'rolling-back' }, { phase: 'restoring-backup' }, { phase: 'backup' }]);
    expect(notes).toEqual(['the home page fatals', null]);
  });

  it('is written queued with its job, whose row the runner then writes as it runs', async () => {
    const id = await queued();
    const jobs = createJobsRepository({ db: t.database.db });
    expect(jobs.find(id)).toMatchObject({
      kind: 'safe-update',
      state: 'queued',
      params: JSON.stringify({ type: 'plugin', slug: 'hello-dolly' }),
      attempts: 0,
    });
    await t.services.jobs.runWithin(id, async (_job, context) => {
      expect(jobs.find(id)).toMatchObject({ state: 'running', attempts: 1 });
      const record = createRecorder(safeUpdates(), (await safeUpdates().find(id))!, context);
      await record.phase('backup', { message: "waiting for the site's scheduled backup" });
      expect(jobs.find(id)).toMatchObject({
        progress: JSON.stringify({ phase: 'backup' }),
        message: "waiting for the site's scheduled backup",
      });
      return finish(safeUpdates(), t.clock, id, { status: 'kept', reason: null, message: null });
    });
    expect(jobs.find(id)).toMatchObject({
      state: 'succeeded',
      message: null,
      progress: JSON.stringify({ phase: 'done' }),
    });
  });
});
