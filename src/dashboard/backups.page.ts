import { Hono, type Context } from 'hono';
import { html } from 'hono/html';
import { TagRetentionInput } from '../backups/index.js';
import { commonProblems } from '../shared/errors.js';
import { TagName } from '../sites/index.js';
import { checksSection } from './backups-checks.view.js';
import { RETENTION_FIELDS, retentionSection } from './backups-retention.view.js';
import { SAMPLE_PERCENT, targetsSection } from './backups-targets.view.js';
import { loadBackupsPage } from './backups.query.js';
import type { DashboardServices } from './deps.js';
import { page } from './layout.js';
import { flashOutcome, takeFlash, type DashboardEnv } from './session.js';

/**
 * Backups across the fleet: each offsite target with its state and the snapshots it holds
 * (read from the target itself), verify and prune (prune asks for a ticked box), and backup
 * retention per tag.
 */
export function createBackupsPage(deps: DashboardServices) {
  const app = new Hono<DashboardEnv>();
  async function act(c: Context<DashboardEnv>, anchor: string, work: () => Promise<string> | string) {
    await flashOutcome(c, work);
    return c.redirect(`/backups${anchor}`, 303);
  }
  const targetOf = (c: Context) => {
    const name = c.req.param('name')!;
    if (!deps.backups.targets.names.includes(name)) throw commonProblems.notFound.create(`there is no target ${name}`);
    return name;
  };

  app.get('/backups', async (c) => {
    const session = c.get('session');
    const now = deps.clock.now().getTime();
    const { targets, checks, retention } = await loadBackupsPage(deps.backups);
    const body = html`<h1>Backups</h1>
      ${targetsSection(session, targets, now)} ${checksSection(session, checks, now)}
      ${retentionSection(session, retention)}`;
    return c.html(page({ title: 'Backups', session, current: '/backups', body, flash: takeFlash(c) }));
  });

  app.post('/backups/targets/:name/prune', (c) =>
    act(c, '', async () => {
      const form = await c.req.parseBody();
      const target = targetOf(c);
      if (form.confirm !== 'yes') return 'Nothing pruned: tick the box to confirm.';
      // A prune holds the store exclusively and may take long: a job, seen finishing on the Activity page.
      const job = await deps.backups.targets.requestPrune(target);
      return `Prune of ${target} queued (job ${job.id}); the Activity page shows what it removed.`;
    }),
  );

  // A verify reads the whole backup back (minutes on a large one): a job, followed in the Verify and repair section.
  app.post('/backups/targets/:name/snapshots/:backupId/verify', (c) =>
    act(c, '#checks', async () => {
      const target = targetOf(c);
      const sample = c.req.query('sample') === String(SAMPLE_PERCENT) ? SAMPLE_PERCENT : undefined;
      const job = await deps.backups.requestVerify(c.req.param('backupId'), { target, sample }, c.get('actor'));
      return `Verify of ${c.req.param('backupId')} on ${target} queued (job ${job.id}): it shows below as it runs.`;
    }),
  );

  app.post('/backups/checks/:siteId/:backupId/repair', (c) =>
    act(c, '#checks', async () => {
      const { siteId, backupId } = c.req.param();
      await deps.backups.get(siteId, backupId);
      const target = c.req.query('target') ?? 'local';
      const job = await deps.backups.requestRepair(backupId, { target }, c.get('actor'));
      return `Repair of ${backupId} on ${target} queued (job ${job.id}): it shows below as it runs.`;
    }),
  );

  // Disaster recovery: a backup the target holds, restored into a connected site (recorded here first if this daemon never had it).
  app.post('/backups/targets/:name/snapshots/:backupId/restore', (c) =>
    act(c, '', async () => {
      const form = await c.req.parseBody();
      const target = targetOf(c);
      if (form.confirm !== 'yes') return 'Nothing restored: tick the box to confirm.';
      const siteId = typeof form.siteId === 'string' ? form.siteId.trim().slice(0, 64) : '';
      if (siteId === '') throw commonProblems.validation.create('Nothing restored: name the site to restore into.');
      await deps.backups.targets.restore(target, c.req.param('backupId'), siteId);
      return `Restore from ${target} started: the site's page shows it as it runs.`;
    }),
  );

  app.post('/backups/retention', (c) =>
    act(c, '#retention', async () => {
      const form = await c.req.parseBody();
      const tag = TagName.safeParse(typeof form.tag === 'string' ? form.tag.trim().toLowerCase() : '');
      if (!tag.success) throw commonProblems.validation.create(`Nothing saved: tag: ${tag.error.issues[0]?.message}`);
      const values = Object.fromEntries(
        RETENTION_FIELDS.map(([field]) => {
          const value = typeof form[field] === 'string' ? form[field].trim() : '';
          return [field, value === '' ? null : Number(value)];
        }),
      );
      const input = TagRetentionInput.safeParse(values);
      if (!input.success) {
        const issue = input.error.issues[0]!;
        throw commonProblems.validation.create(`Nothing saved: ${String(issue.path[0])}: ${issue.message}`);
      }
      await deps.backups.retention.setTag(tag.data, input.data);
      return `Retention of tag ${tag.data} saved.`;
    }),
  );

  app.post('/backups/retention/:tag/delete', (c) =>
    act(c, '#retention', async () => {
      const form = await c.req.parseBody();
      if (form.confirm !== 'yes') return 'Nothing removed: tick the box to confirm.';
      await deps.backups.retention.deleteTag(c.req.param('tag'));
      return `Retention of tag ${c.req.param('tag')} removed: its sites follow the defaults.`;
    }),
  );
  return app;
}
