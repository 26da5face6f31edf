import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createSafeUpdateRecording,
  createUpdateHistoryRepository,
  createUpdateRecorder,
} from '../../src/update-history/index.js';
import { createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';

/**
 * Safe updates record into the update history directly (issue 35: no closure through bulk updates):
 * a row when one is queued through the API, naming who asked and linked to its report, finished
 * with the decision when its job ends.
 */
describe('the update history of safe updates', () => {
  let t: TestApp;
  let siteId: string;
  beforeEach(() => {
    t = createTestApp();
    siteId = insertConnectedSite(t, { name: 'Alpha', wordpressVersion: '6.4.2' });
  });
  afterEach(() => t.close());

  const recording = () => {
    const history = createUpdateHistoryRepository(t.state);
    return createSafeUpdateRecording({
      recorder: createUpdateRecorder({ repository: history, clock: t.clock }),
      history,
      inventories: t.services.inventories,
      sites: t.services.sitesRepository,
      clock: t.clock,
    });
  };
  const rows = () => createUpdateHistoryRepository(t.state).list({ siteId, limit: 10 });
  const report = (id: string, fields: object) => ({
    id,
    siteId,
    type: 'core' as const,
    slug: 'wordpress',
    status: 'queued',
    reason: null,
    message: null,
    fromVersion: null,
    toVersion: '6.5.0',
    ...fields,
  });

  it('writes a running row as one is queued, and ends it kept or rolled back', async () => {
    const record = recording();
    await record.started(report('sup_a', {}), { kind: 'user', id: 'usr_alice' } as never);
    await record.started(report('sup_b', {}), undefined);
    expect((await rows()).map((row) => row.result)).toEqual(['running', 'running']);
    await record.settled(report('sup_a', { status: 'kept', fromVersion: '6.4.2' }));
    await record.settled(report('sup_b', { status: 'rolled-back', reason: 'fatal-error', fromVersion: '6.4.2' }));
    const [b, a] = await rows();
    expect(a).toMatchObject({
      type: 'core',
      slug: null,
      safeUpdateId: 'sup_a',
      fromVersion: '6.4.2',
      toVersion: '6.5.0',
      result: 'succeeded',
      triggerKind: 'user',
      triggerId: 'usr_alice',
    });
    expect(b).toMatchObject({
      safeUpdateId: 'sup_b',
      result: 'failed',
      reason: 'update-rolled-back',
      triggerKind: 'request',
    });
  });

  it('writes nothing for a site it does not know', async () => {
    await recording().started(report('sup_c', { siteId: 'site_unknown' }), undefined);
    expect(await createUpdateHistoryRepository(t.state).list({ limit: 10 })).toEqual([]);
  });
});
