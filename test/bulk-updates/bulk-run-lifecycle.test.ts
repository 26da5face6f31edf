import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { TestApp } from '../support/test-app.js';
import { apply, closeFleets, finished, fleet, gated, holdUntil } from './bulk-fleet.js';
import type { UpdateWatch } from './updatable-fake.js';
import { signIn } from '../dashboard/signed-in.js';

/** A bulk run from its start to its end: one of its sites cancelled alone, and the slots it leaves for the next run. */
afterEach(closeFleets);
afterAll(closeFleets);

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Polls until `done` holds, for at most `ms` (a run that never ends must fail the test, not hang it). */
async function until(done: () => boolean | Promise<boolean>, ms = 3_000): Promise<void> {
  for (let waited = 0; !(await done()) && waited < ms; waited += 20) await pause(20);
}
const runOf = async (t: TestApp, id: string) => (await t.call('GET', `/api/fleet/updates/runs/${id}`)).json;
const inFlight = (watch: UpdateWatch, count: number) => until(() => watch.inFlight === count);

describe('cancelling one site of a bulk update', () => {
  it('a site not started yet: the run still ends, and the next run gets every slot', async () => {
    const { t, watch } = await fleet(3, { config: { bulkUpdates: { concurrency: 2, perHost: 2 } } });
    const { open } = gated(watch);
    const queued = await apply(t, { all: true, items: [{ type: 'plugin' }] });
    const id = queued.json.job.id as string;
    // Two sites hold the two slots; the third waits for one.
    await inFlight(watch, 2);
    const waiting = (await runOf(t, id)).sites.filter((site: { state: string }) => site.state === 'queued');
    expect(waiting).toHaveLength(1);
    const cancel = await t.call('POST', `/api/jobs/${waiting[0].jobId}/cancel`);
    expect(cancel.status, cancel.text).toBe(200);
    expect(cancel.json).toMatchObject({ state: 'cancelled' });
    open();

    await until(async () => !['queued', 'running'].includes((await runOf(t, id)).job.state));
    const run = await runOf(t, id);
    expect(run.job).toMatchObject({ state: 'succeeded', reason: null });
    expect(run.progress).toEqual({ total: 3, done: 3, succeeded: 2, failed: 0, skipped: 0, cancelled: 1 });
    expect(run.sites.find((site: { jobId: string }) => site.jobId === waiting[0].jobId)).toMatchObject({
      state: 'cancelled',
      // Never started: not left reading as still to come.
      items: [expect.objectContaining({ state: 'skipped', reason: 'cancelled' })],
    });

    // The cancelled site's slot was not kept: the next run updates two sites at once again.
    watch.maxInFlight = 0;
    holdUntil(watch, 2);
    const next = await apply(t, { all: true, items: [{ type: 'theme' }] });
    expect(next.status, next.text).toBe(202);
    expect((await finished(t, next.json.job.id)).progress).toMatchObject({ total: 3, succeeded: 3 });
    expect(watch.maxInFlight).toBe(2);
  });
});

describe('cancelling one site from the run page', () => {
  it('offers Cancel on a site not started, cancels that one only, and the run ends', async () => {
    const { t, watch } = await fleet(3, { config: { bulkUpdates: { concurrency: 2, perHost: 2 } } });
    const { open } = gated(watch);
    const user = await signIn(t);
    const id = (await apply(t, { all: true, items: [{ type: 'plugin' }] })).json.job.id as string;
    await inFlight(watch, 2);
    const waiting = (await runOf(t, id)).sites.find((site: { state: string }) => site.state === 'queued');
    const cancelPath = `/updates/runs/${id}/sites/${waiting.jobId}/cancel`;

    const page = await (await user.get(`/updates/runs/${id}`)).text();
    // One Cancel button: on the waiting site's row, none on the two running.
    expect(page.match(/Cancel this site/g)).toHaveLength(1);
    expect(page).toContain(`action="${cancelPath}"`);
    expect((await user.post(cancelPath, {}, false)).status).toBe(403);
    // A job that is not one of this run's sites is refused, and nothing is cancelled.
    const stranger = await user.follow(await user.post(`/updates/runs/${id}/sites/job_other/cancel`, {}));
    expect(stranger).toContain('That site is not part of this bulk update.');

    const cancelled = await user.post(cancelPath, {});
    expect(cancelled.status).toBe(303);
    expect(await user.follow(cancelled)).toContain(`Cancelled ${waiting.url}`);
    open();

    await until(async () => !['queued', 'running'].includes((await runOf(t, id)).job.state));
    const run = await runOf(t, id);
    expect(run.job.state).toBe('succeeded');
    expect(run.progress).toMatchObject({ total: 3, succeeded: 2, cancelled: 1 });
    const after = await (await user.get(`/updates/runs/${id}`)).text();
    expect(after).not.toContain('Cancel this site');
    // Recorded as the signed-in user's doing.
    const [alice] = await t.services.users.list();
    expect(t.logs.events('job.cancelled')).toContainEqual(
      expect.objectContaining({ jobId: waiting.jobId, requestedByKind: 'user', requestedById: alice!.id }),
    );
  });
});

describe('applying a preview', () => {
  const applyPreview = (t: TestApp, id: string, json?: unknown) =>
    t.call('POST', `/api/fleet/updates/runs/${id}/apply`, json === undefined ? {} : { json });

  it('starts one run: the preview is used once, a second apply answers the run it started', async () => {
    const { t, sites } = await fleet(2);
    const preview = await apply(t, { all: true, dryRun: true, items: [{ type: 'plugin' }] });
    expect(preview.status, preview.text).toBe(200);
    expect(preview.json.appliedAs).toBeNull();
    const id = preview.json.job.id as string;

    const first = await applyPreview(t, id, { safe: false });
    expect(first.status, first.text).toBe(202);
    expect(first.json).toMatchObject({ dryRun: false, safe: false, progress: { total: 2 } });
    expect(first.json.sites.map((site: { items: unknown[] }) => site.items)).toEqual([
      [expect.objectContaining({ type: 'plugin', slug: 'akismet', fromVersion: '1.0.0', toVersion: '1.1.0' })],
      [expect.objectContaining({ type: 'plugin', slug: 'akismet', fromVersion: '1.0.0', toVersion: '1.1.0' })],
    ]);
    const runId = first.json.job.id as string;

    const again = await applyPreview(t, id);
    expect(again.status, again.text).toBe(409);
    expect(again.headers.get('content-type')).toContain('application/problem+json');
    expect(again.json).toMatchObject({ type: '/problems/preview-already-applied', status: 409, runId });
    expect(again.json.detail).toContain(runId);
    expect((await runOf(t, id)).appliedAs).toBe(runId);

    expect((await finished(t, runId)).progress).toMatchObject({ total: 2, succeeded: 2 });
    expect(sites.map((site) => site.state.plugin)).toEqual(['1.1.0', '1.1.0']);
    const runs = await t.services.bulkUpdates.runs(10);
    expect(runs.filter((run) => !run.dryRun).map((run) => run.id)).toEqual([runId]);
  });

  it('answers problems for what is not a preview to apply', async () => {
    const { t } = await fleet(1);
    const run = await apply(t, { all: true, items: [{ type: 'plugin' }] });
    await finished(t, run.json.job.id);
    const notPreview = await applyPreview(t, run.json.job.id);
    expect(notPreview.status, notPreview.text).toBe(409);
    expect(notPreview.json.type).toBe('/problems/bulk-update-not-a-preview');
    const unknown = await applyPreview(t, 'bulk_01jc0z6x8m3yq4x0h7a9b2c3d4');
    expect(unknown.status, unknown.text).toBe(404);
    expect(unknown.json.type).toBe('/problems/bulk-update-not-found');
    const read = await t.call('POST', `/api/fleet/updates/runs/${run.json.job.id}/apply`, { token: t.readToken });
    expect(read.status).toBe(403);
  });
});

describe('the concurrency settings', () => {
  it('a bulk update reaches SITEWARDEN_BULK_UPDATE_CONCURRENCY above SITEWARDEN_SITE_CONCURRENCY', async () => {
    const { t, watch } = await fleet(4, {
      config: { siteConcurrency: 2, bulkUpdates: { concurrency: 4, perHost: 4 } },
    });
    holdUntil(watch, 4);
    const queued = await apply(t, { all: true, items: [{ type: 'plugin' }] });
    expect((await finished(t, queued.json.job.id)).progress).toMatchObject({ total: 4, succeeded: 4 });
    expect(watch.maxInFlight).toBe(4);
  });
});
