import { Hono, type Context } from 'hono';
import { runWithinScope } from '../bulk-updates/index.js';
import { isAppError } from '../shared/errors.js';
import { checksOf, selectionOf } from './bulk-update-form.values.js';
import { runPageBody } from './bulk-run.view.js';
import type { DashboardServices } from './deps.js';
import { count } from './format.js';
import { page } from './layout.js';
import { setFlash, takeFlash, type DashboardEnv } from './session.js';

export { BULK_FORM_ID } from './bulk-update-form.values.js';
export { runHistory } from './bulk-runs.view.js';

/**
 * Bulk updates from the Updates page: Preview (a dry run, recorded) of what the checkboxes
 * select, Apply of exactly that plan (safe by default), and the run's page, whose per-site table
 * live.js swaps in again as the jobs move (without script, the page is reloaded by hand).
 */
export function createBulkUpdatesPages(deps: DashboardServices) {
  const app = new Hono<DashboardEnv>();
  const fail = (c: Context, error: unknown, back: string) => {
    if (!isAppError(error)) throw error;
    setFlash(c, { kind: 'error', text: error.detail });
    return c.redirect(back, 303);
  };

  app.post('/updates/preview', async (c) => {
    const selection = selectionOf(await c.req.parseBody({ all: true }));
    const back = selection.tag.length > 0 ? `/updates?tag=${encodeURIComponent(selection.tag[0]!)}` : '/updates';
    try {
      const job = await deps.bulkUpdates.start({
        targets: await deps.bulkUpdates.select(selection),
        trigger: { kind: 'user', id: c.get('session').user.id },
        dryRun: true,
      });
      return c.redirect(`/updates/runs/${job.id}`, 303);
    } catch (error) {
      return fail(c, error, back);
    }
  });

  app.post('/updates/runs/:id/apply', async (c) => {
    const form = await c.req.parseBody();
    const preview = await deps.bulkUpdates.run(c.req.param('id'));
    try {
      // Once per preview: a second click (or a second tab) names the run the first one started.
      const safe = form.safe === '1';
      const checks = safe ? checksOf(form) : undefined;
      if (checks === null) {
        setFlash(c, { kind: 'error', text: 'Nothing applied: the threshold is a percentage from 0 to 100.' });
        return c.redirect(`/updates/runs/${preview.job.id}`, 303);
      }
      const started = await deps.bulkUpdates.applyPreview(preview.job.id, {
        trigger: { kind: 'user', id: c.get('session').user.id },
        safe,
        ...(checks ? { checks } : {}),
      });
      setFlash(c, { kind: 'ok', text: `Bulk update started on ${count(started.sites.length, 'site')}.` });
      return c.redirect(`/updates/runs/${started.job.id}`, 303);
    } catch (error) {
      return fail(c, error, `/updates/runs/${preview.job.id}`);
    }
  });

  app.post('/updates/runs/:id/cancel', async (c) => {
    const run = await deps.bulkUpdates.run(c.req.param('id'));
    try {
      await deps.jobs.cancel(run.job.id, c.get('actor'));
      setFlash(c, { kind: 'ok', text: 'Cancelled: sites not started yet will not be; running ones finish.' });
      return c.redirect(`/updates/runs/${run.job.id}`, 303);
    } catch (error) {
      return fail(c, error, `/updates/runs/${run.job.id}`);
    }
  });

  // One site of a run, not started yet: the run goes on without it (and ends when its other sites do).
  app.post('/updates/runs/:id/sites/:jobId/cancel', async (c) => {
    const run = await deps.bulkUpdates.run(c.req.param('id'));
    const site = run.sites.find((candidate) => candidate.jobId === c.req.param('jobId'));
    try {
      if (!site?.jobId) {
        setFlash(c, { kind: 'error', text: 'That site is not part of this bulk update.' });
      } else {
        await deps.jobs.cancel(site.jobId, c.get('actor'));
        setFlash(c, { kind: 'ok', text: `Cancelled ${site.url}: it will not be updated in this run.` });
      }
      return c.redirect(`/updates/runs/${run.job.id}`, 303);
    } catch (error) {
      return fail(c, error, `/updates/runs/${run.job.id}`);
    }
  });

  app.get('/updates/runs/:id', async (c) => {
    const session = c.get('session');
    // Site scopes (issue 33): a run reaching outside the request's scope is an unknown run.
    const run = await runWithinScope(await deps.bulkUpdates.run(c.req.param('id')), c.get('access').sites, deps.sites);
    const live = !run.dryRun && (run.job.state === 'queued' || run.job.state === 'running');
    return c.html(
      page({
        title: run.dryRun ? 'Preview' : 'Bulk update',
        session,
        current: '/updates',
        body: runPageBody(session, run, live),
        flash: takeFlash(c),
        scripts: live ? ['/assets/live.js'] : [],
      }),
    );
  });
  return app;
}
