import { Readable } from 'node:stream';
import { Hono, type Context } from 'hono';
import { backupSettingsSection } from '../backups/index.js';
import { auditReportResponse, performanceSettingsSection } from '../performance/index.js';
import { checkTagsKeepScope } from '../http/permissions.js';
import { commonProblems, isAppError } from '../shared/errors.js';
import { monitoringSettingsSection } from '../uptime/index.js';
import { SiteTagsInput } from '../sites/index.js';
import { backupSettingsPatch } from './backup-settings.fields.js';
import type { DashboardServices } from './deps.js';
import { what } from './safe-updates.page.js';
import { flashOutcome, setFlash, type DashboardEnv } from './session.js';

type Form = Record<string, unknown>;

const field = (form: Form, name: string) => {
  const value = form[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
};
const number = (form: Form, name: string) => {
  const value = field(form, name);
  return value === undefined ? undefined : Number(value);
};

/**
 * Form posts that change a site: each does its work through the feature's service and answers
 * with a redirect back to the page (post/redirect/get), the outcome in a flash message. A
 * problem a user can cause (a refused update, a stale backup id) becomes the flash, not a 500.
 */
export function createSiteActions(deps: DashboardServices) {
  const sections = {
    monitoring: monitoringSettingsSection(deps.uptime),
    backups: backupSettingsSection(deps.backups),
    performance: performanceSettingsSection(deps.performance),
  };
  const app = new Hono<DashboardEnv>();

  async function act(c: Context<DashboardEnv>, back: string, work: (form: Form) => Promise<string> | string) {
    const form = await c.req.parseBody();
    await flashOutcome(c, () => work(form));
    // A page may ask to come back to itself (the Updates page); only a local path is followed.
    const asked = form.back;
    const local = typeof asked === 'string' && /^\/(updates|sites\/)[^\s]*$/.test(asked) && !asked.startsWith('//');
    return c.redirect(local ? asked : back, 303);
  }
  const siteBack = (c: Context, anchor = '') => `/sites/${encodeURIComponent(c.req.param('id')!)}${anchor}`;

  app.post('/sites/connect', async (c) => {
    const form = await c.req.parseBody();
    try {
      const result = await deps.sites.connect({
        url: field(form, 'url') ?? '',
        username: field(form, 'username'),
        applicationPassword: field(form, 'applicationPassword'),
      });
      // The approval page is on the site: the dashboard's CSP lets a form post only to this origin, so a
      // page of ours moves the browser on (a navigation, which form-action does not govern).
      if (result.mode === 'authorization') return c.redirect(`/sites/${result.site.id}/approve`, 303);
      setFlash(c, { kind: 'ok', text: 'Site connected.' });
      return c.redirect(`/sites/${result.site.id}`, 303);
    } catch (error) {
      if (!isAppError(error)) throw error;
      setFlash(c, { kind: 'error', text: `Could not connect the site: ${error.detail}` });
      return c.redirect('/', 303);
    }
  });

  for (const verb of ['update', 'activate', 'deactivate', 'delete'] as const) {
    app.post(`/sites/:id/plugins/:slug/${verb}`, (c) =>
      act(c, siteBack(c, '#plugins'), async () => {
        const { id, slug } = c.req.param();
        if (verb === 'update')
          return `Updated ${slug} to ${(await deps.plugins.update(id, slug, { requestedBy: c.get('actor') })).version}.`;
        if (verb === 'activate') return (await deps.plugins.activate(id, slug), `Activated ${slug}.`);
        if (verb === 'deactivate') return (await deps.plugins.deactivate(id, slug), `Deactivated ${slug}.`);
        await deps.plugins.remove(id, slug);
        return `Deleted ${slug}.`;
      }),
    );
  }
  for (const verb of ['update', 'activate', 'delete'] as const) {
    app.post(`/sites/:id/themes/:slug/${verb}`, (c) =>
      act(c, siteBack(c, '#themes'), async () => {
        const { id, slug } = c.req.param();
        if (verb === 'update')
          return `Updated ${slug} to ${(await deps.themes.update(id, slug, { requestedBy: c.get('actor') })).version}.`;
        if (verb === 'activate') return (await deps.themes.activate(id, slug), `Activated ${slug}.`);
        await deps.themes.remove(id, slug);
        return `Deleted ${slug}.`;
      }),
    );
  }

  // Safe updates: queued as a job; the report shows under the site's Safe updates as it runs.
  const safeUpdate = (c: Context<DashboardEnv>, type: 'plugin' | 'theme' | 'core', slug: string) =>
    act(c, siteBack(c, '#safe-updates'), async () => {
      const update = await deps.safeUpdates.start({
        siteId: c.req.param('id')!,
        type,
        slug,
        requestedBy: c.get('actor'),
      });
      return `Safe update of ${what(update)} started; it shows under Safe updates as it runs.`;
    });
  for (const type of ['plugin', 'theme'] as const)
    app.post(`/sites/:id/${type}s/:slug/safe-update`, (c) => safeUpdate(c, type, c.req.param('slug')));
  app.post('/sites/:id/core/safe-update', (c) => safeUpdate(c, 'core', 'wordpress'));
  app.post('/sites/:id/core/update', (c) =>
    act(c, siteBack(c, '#safe-updates'), async () => {
      const updated = await deps.wordpressUpdates.updateCore(c.req.param('id'), { requestedBy: c.get('actor') });
      return `Updated WordPress from ${updated.previousVersion} to ${updated.version}.`;
    }),
  );

  app.post('/sites/:id/backups', (c) =>
    act(c, siteBack(c, '#backups'), async () => {
      await deps.backups.request(c.req.param('id'));
      return 'Backup started; it shows here as it runs.';
    }),
  );
  app.post('/sites/:id/backups/:backupId/verify', (c) =>
    act(c, siteBack(c, '#backups'), async () => {
      const { id, backupId } = c.req.param();
      await deps.backups.get(id, backupId);
      // A job (minutes on a large backup): its progress and what it found are on the Backups page.
      const job = await deps.backups.requestVerify(backupId, {}, c.get('actor'));
      return `Verify queued (job ${job.id}): the Backups page shows its progress and what it found.`;
    }),
  );
  app.post('/sites/:id/backups/:backupId/restore', (c) =>
    act(c, siteBack(c, '#backups'), async (form) => {
      if (form.confirm !== 'yes') return 'Nothing restored: tick the box to confirm.';
      const { id, backupId } = c.req.param();
      await deps.backups.restore(id, backupId);
      return 'Restore started.';
    }),
  );
  app.get('/sites/:id/backups/:backupId/download', async (c) => {
    const { filename, stream } = await deps.backups.archive(c.req.param('id'), c.req.param('backupId'));
    c.header('content-type', 'application/gzip');
    c.header('content-disposition', `attachment; filename="${filename}"`);
    return c.body(Readable.toWeb(stream) as ReadableStream, 200);
  });

  app.post('/sites/:id/audits', (c) =>
    act(c, siteBack(c), async () => {
      await deps.performance.requestAudit(c.req.param('id'), {});
      return 'Audit queued.';
    }),
  );
  app.get('/sites/:id/audits/:auditId/report', async (c) =>
    auditReportResponse(
      await deps.performance.report(c.req.param('id'), c.req.param('auditId')),
      c.req.header('accept-encoding'),
    ),
  );

  app.post('/sites/:id/settings', (c) =>
    act(c, siteBack(c, '#settings'), async (form) => {
      const id = c.req.param('id');
      const patches = {
        monitoring: sections.monitoring.input.safeParse({ intervalSeconds: number(form, 'intervalSeconds') }),
        performance: sections.performance.input.safeParse({
          intervalHours: number(form, 'auditIntervalHours'),
          enabled: form.auditsEnabled === '1',
        }),
        backups: sections.backups.input.safeParse(backupSettingsPatch(form)),
      };
      const tags = SiteTagsInput.safeParse({
        tags: (field(form, 'tags') ?? '')
          .split(',')
          .map((tag) => tag.trim())
          .filter(Boolean),
      });
      if (!tags.success) throw commonProblems.validation.create(`tags: ${tags.error.issues[0]?.message}`);
      const invalid = Object.entries(patches).find(([, result]) => !result.success);
      if (invalid) throw commonProblems.validation.create(`${invalid[0]}: ${invalid[1].error!.issues[0]?.message}`);
      // Tags move a site between scopes: checked before anything is written.
      checkTagsKeepScope(c.get('access'), tags.data.tags);
      const writes = [
        await sections.monitoring.prepare(id, patches.monitoring.data!),
        await sections.performance.prepare(id, patches.performance.data!),
        await sections.backups.prepare(id, patches.backups.data!),
      ];
      for (const write of writes) await write();
      await deps.sites.setTags(id, tags.data.tags);
      return 'Settings saved.';
    }),
  );
  return app;
}
