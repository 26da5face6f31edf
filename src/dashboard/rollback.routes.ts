import { Hono, type Context } from 'hono';
import { html } from 'hono/html';
import { isAppError } from '../shared/errors.js';
import type { DashboardServices } from './deps.js';
import { action, page } from './layout.js';
import { flashOutcome, setFlash, takeFlash, type DashboardEnv } from './session.js';

/**
 * Rolling back a plain update from a site's update history: a page that says what will be put
 * back and asks to confirm, then the form post (post/redirect/get, the outcome in a flash). An
 * entry that cannot be rolled back (none, no restore point, already rolled back) is a flash too.
 */
export function createRollbackRoutes(deps: Pick<DashboardServices, 'bulkUpdates'>) {
  const app = new Hono<DashboardEnv>();
  const historyOf = (c: Context) => `/sites/${encodeURIComponent(c.req.param('id')!)}#update-history`;

  app.get('/sites/:id/updates/history/:entryId/rollback', async (c) => {
    const { id, entryId } = c.req.param();
    let entry;
    try {
      entry = await deps.bulkUpdates.rollbackableEntry(id, entryId);
    } catch (error) {
      if (!isAppError(error)) throw error;
      setFlash(c, { kind: 'error', text: error.detail });
      return c.redirect(historyOf(c), 303);
    }
    const item = `${entry.slug ?? entry.type} (${entry.type})`;
    const path = `/sites/${encodeURIComponent(id)}/updates/history/${encodeURIComponent(entryId)}/rollback`;
    const body = html`<p><a href="${historyOf(c)}">← Site</a></p>
      <h1>Roll back ${item}</h1>
      <p>
        Puts back the copy of ${entry.slug ?? 'WordPress core'} taken before it was updated from
        ${entry.fromVersion ?? '?'} to ${entry.toVersion ?? '?'}, through the site’s standalone rollback path (it works
        when WordPress itself fails). Update policies then hold ${entry.toVersion ?? 'that version'} on this site until
        it is released.
      </p>
      ${action(c.get('session'), path, 'Roll back', { danger: true, confirm: `Put ${entry.slug ?? 'WordPress core'} back as it was` })}`;
    return c.html(
      page({ title: `Roll back ${item}`, session: c.get('session'), current: '/', body, flash: takeFlash(c) }),
    );
  });

  app.post('/sites/:id/updates/history/:entryId/rollback', async (c) => {
    const { id, entryId } = c.req.param();
    const form = await c.req.parseBody();
    await flashOutcome(c, async () => {
      if (form.confirm !== 'yes') return 'Nothing was rolled back: tick the box to confirm.';
      const { entry } = await deps.bulkUpdates.rollBackEntry(id, entryId, c.get('actor'));
      return `Rolled back ${entry.slug ?? entry.type} to ${entry.fromVersion ?? 'its previous version'}.`;
    });
    return c.redirect(historyOf(c), 303);
  });
  return app;
}
