import { afterEach, describe, expect, it } from 'vitest';
import { createUpdateHistoryRepository } from '../../src/update-history/update-history.repository.js';
import { createJobsRepository } from '../../src/jobs/jobs.repository.js';
import { createSafeUpdatesRepository } from '../../src/safe-updates/index.js';
import { createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';
import { fleet, closeFleets } from '../bulk-updates/bulk-fleet.js';
import { signIn } from './signed-in.js';

/**
 * A safe update kept although its pages look different is a warning, never the green tick; one refused because the
 * site was already down says so; the apply and policy forms take the visual check's settings.
 */
const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
  await closeFleets();
});

async function app() {
  const t: TestApp = createTestApp();
  closers.push(() => t.close());
  return { t, user: await signIn(t), siteId: insertConnectedSite(t, { name: 'Alpha' }) };
}

async function insertSafeUpdate(t: TestApp, siteId: string, id: string, fields: Record<string, unknown>) {
  const now = t.clock.now();
  await createSafeUpdatesRepository(t.state).insert({
    id,
    siteId,
    itemType: 'plugin',
    slug: 'restyle',
    status: 'kept',
    phase: 'done',
    policy: JSON.stringify({
      urls: [],
      settleMs: 0,
      attempts: 1,
      retryDelayMs: 0,
      checkTimeoutMs: 15_000,
      backup: false,
      backupWaitMinutes: 30,
      visual: { enabled: true, threshold: 0.03, rollback: false },
    }),
    fromVersion: '1.0.0',
    toVersion: '1.1.0',
    report: '{}',
    createdAt: now,
    startedAt: now,
    finishedAt: now,
    ...fields,
  });
}

describe('visual changes and sites already down, in the dashboard', () => {
  it('shows a kept update that looks different as a warning on the site page and its report', async () => {
    const { t, user, siteId } = await app();
    await insertSafeUpdate(t, siteId, 'sup_looks', {
      report: JSON.stringify({
        screenshots: [
          { url: '/', before: 'before-0.png', after: 'after-0.png', diff: 'diff-0.png', changedRatio: 0.62 },
        ],
        visualChange: true,
      }),
    });
    // Its update-history row (succeeded, with the warning) reads as a warning too.
    const history = createUpdateHistoryRepository(t.state);
    await history.insert({
      id: 'upd_looks',
      siteId,
      type: 'plugin',
      slug: 'restyle',
      fromVersion: '1.0.0',
      toVersion: '1.1.0',
      startedAt: t.clock.now(),
      triggerKind: 'request',
      triggerId: null,
      jobId: null,
      safeUpdateId: 'sup_looks',
      restorePoint: null,
      rollbackOf: null,
      result: 'running',
    });
    await history.finish('upd_looks', {
      result: 'succeeded',
      reason: 'visual-change',
      error: 'kept, but a page looks different beyond the threshold (see its report)',
      finishedAt: t.clock.now(),
    });
    const site = await (await user.get(`/sites/${siteId}`)).text();
    expect(site).toMatch(/class="badge degraded"\s*><span aria-hidden="true">◆<\/span> kept, looks different/);
    expect(site).toMatch(/class="badge degraded"\s*><span aria-hidden="true">◆<\/span> succeeded, looks different/);
    expect(site).not.toMatch(/class="badge succeeded"/);
    expect(site).not.toMatch(/class="badge kept"/);
    const report = await (await user.get(`/sites/${siteId}/safe-updates/sup_looks`)).text();
    expect(report).toContain('data-outcome="warning"');
    expect(report).toContain('a page looks different beyond the threshold');
    expect(report).not.toMatch(/class="badge kept"/);
  });

  it('says a site was already down before the update, and shows the broken page of a rolled-back one', async () => {
    const { t, user, siteId } = await app();
    await insertSafeUpdate(t, siteId, 'sup_down', {
      status: 'failed',
      reason: 'site-down-before-update',
      message: 'the site was already down before the update',
    });
    await insertSafeUpdate(t, siteId, 'sup_broken', {
      status: 'rolled-back',
      reason: 'fatal-error',
      report: JSON.stringify({
        screenshots: [
          { url: '/', before: 'before-0.png', after: 'after-0.png', diff: 'diff-0.png', changedRatio: 0.9 },
        ],
        visualChange: true,
      }),
    });
    const down = await (await user.get(`/sites/${siteId}/safe-updates/sup_down`)).text();
    expect(down).toContain('not updated: site already down');
    expect(down).toContain('Not the update’s fault');
    const broken = await (await user.get(`/sites/${siteId}/safe-updates/sup_broken`)).text();
    expect(broken).toContain(`src="/sites/${siteId}/safe-updates/sup_broken/screenshots/after-0.png"`);
    expect(broken).toContain('After the update, before the rollback: /');
  });

  it('shows a bulk run’s kept-but-different item as a warning and a site already down as such', async () => {
    const { t, user, siteId } = await app();
    const other = insertConnectedSite(t, { name: 'Beta' });
    const jobs = createJobsRepository({ db: t.database.db });
    const now = t.clock.now();
    const item = (slug: string, state: string, reason: string | null, message: string | null) => ({
      type: 'plugin',
      slug,
      fromVersion: '1.0.0',
      toVersion: '1.1.0',
      state,
      reason,
      message,
    });
    jobs.insert({
      id: 'bulk_visual',
      kind: 'bulk-update',
      siteId: null,
      state: 'succeeded',
      params: JSON.stringify({
        trigger: { kind: 'request', id: null },
        dryRun: false,
        safe: true,
        notAfter: null,
        sites: 2,
      }),
      progress: '{}',
      createdAt: now,
      finishedAt: now,
    });
    const child = (id: string, site: string, items: unknown[]) =>
      jobs.insert({
        id,
        kind: 'safe-site-update',
        siteId: site,
        state: 'succeeded',
        params: JSON.stringify({
          bulkId: 'bulk_visual',
          url: `https://site${id.slice(-1)}.example`,
          host: `site${id.slice(-1)}.example`,
          items: [],
        }),
        progress: JSON.stringify({ items }),
        createdAt: now,
        finishedAt: now,
      });
    child('bulk_visual-00000', siteId, [
      item(
        'restyle',
        'succeeded',
        'visual-change',
        'kept, but it looks different (safe update sup_x): / changed on 62.0 %',
      ),
    ]);
    child('bulk_visual-00001', other, [
      item('demo', 'skipped', 'site-down-before-update', 'the site was already down before the update'),
    ]);
    const page = await (await user.get('/updates/runs/bulk_visual')).text();
    expect(page).toMatch(/data-site-state="updated, looks different"/);
    expect(page).toMatch(/class="badge degraded"\s*><span aria-hidden="true">◆<\/span> updated, looks different/);
    expect(page).toMatch(/data-site-state="site was already down"/);
    expect(page).toContain('skipped: site was already down');
  });

  it('applies a preview with the visual check’s settings from the form, stored with the run', async () => {
    const { t, sites } = await fleet(1);
    const user = await signIn(t);
    const previewed = await user.post('/updates/preview', [
      ['item', 'plugin:akismet'],
      ['site', sites[0]!.id],
    ]);
    const previewPath = previewed.headers.get('location')!;
    const preview = await user.follow(previewed);
    expect(preview).toMatch(/name="threshold" type="number"[^>]*value="3"/);
    expect(preview).toMatch(/name="visualRollback" value="1"/);
    const wrong = await user.post(`${previewPath}/apply`, { safe: '1', visual: '1', threshold: '150' });
    expect(await user.follow(wrong)).toContain('the threshold is a percentage from 0 to 100');
    const applied = await user.post(`${previewPath}/apply`, {
      safe: '1',
      visual: '1',
      threshold: '7.5',
      visualRollback: '1',
    });
    expect(applied.status).toBe(303);
    const runId = applied.headers.get('location')!.split('/').at(-1)!;
    await t.services.bulkUpdates.idle();
    const run = await t.call('GET', `/api/fleet/updates/runs/${runId}`, { token: t.readToken });
    expect(run.json).toMatchObject({
      safe: true,
      checks: { visual: { enabled: true, threshold: 0.075, rollback: true } },
    });
  });

  it('takes the policy’s visual check from its form, rolling back by default', async () => {
    const { t, user } = await app();
    const form = await (await user.get('/updates/policies/new')).text();
    expect(form).toMatch(/name="visualRollback" value="1" checked/);
    expect(form).toMatch(/id="visualThreshold"[^>]*value="3"/);
    const fields: [string, string][] = [
      ['name', 'Nightly'],
      ['scope', 'tag'],
      ['tag', 'client-a'],
      ['kinds', 'plugins'],
      ['days', 'mon'],
      ['start', '02:00'],
      ['end', '04:00'],
      ['releaseDelayDays', '0'],
      ['priority', '0'],
      ['safe', '1'],
      ['enabled', '1'],
      ['visual', '1'],
    ];
    const refused = await user.post('/updates/policies', [...fields, ['visualThreshold', '250']]);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/id="visualThreshold-error"/);
    const created = await user.post('/updates/policies', [...fields, ['visualThreshold', '10']]);
    expect(created.status).toBe(303);
    const [policy] = await t.services.updatePolicies.list();
    // The box left unticked: kept with a warning.
    expect(policy!.settings.checks.visual).toEqual({ enabled: true, threshold: 0.1, rollback: false });
    const edited = await user.post(`/updates/policies/${policy!.id}`, [
      ...fields,
      ['visualThreshold', '4'],
      ['visualRollback', '1'],
    ]);
    expect(edited.status).toBe(303);
    expect((await t.services.updatePolicies.get(policy!.id)).settings.checks.visual).toEqual({
      enabled: true,
      threshold: 0.04,
      rollback: true,
    });
    const list = await (await user.get('/updates/policies')).text();
    expect(list).toContain('visual 4 %');
  });
});
