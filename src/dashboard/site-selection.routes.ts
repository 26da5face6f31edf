import { Hono } from 'hono';
import { html } from 'hono/html';
import { isAppError } from '../shared/errors.js';
import { SiteTagsInput } from '../sites/index.js';
import type { SignedInSession } from '../users/index.js';
import type { DashboardServices } from './deps.js';
import { csrfField } from './layout.js';
import { FleetActionInput } from '../fleet-actions/index.js';
import { setFlash, type DashboardEnv } from './session.js';

/** The overview's form that its rows' checkboxes belong to (`form=`), outside the table. */
const SELECTION_FORM_ID = 'site-selection';
const MAX_SELECTED = 500;

const actions = ['backup', 'refresh', 'add-tag', 'remove-tag', 'install-plugin', 'install-theme'] as const;
type SelectionAction = (typeof actions)[number];

/** A row's checkbox. */
export const selectSite = (id: string, label: string) =>
  html`<input type="checkbox" form="${SELECTION_FORM_ID}" name="site" value="${id}" aria-label="Select ${label}" />`;

/** What a user does to the ticked sites of the overview's page: back up, refresh, tag, untag, install a plugin or a theme. */
export function selectionForm(session: SignedInSession, back: string) {
  return html`<form class="actions selection" id="${SELECTION_FORM_ID}" method="post" action="/sites/selection">
    ${csrfField(session)}<input type="hidden" name="back" value="${back}" />
    <span class="muted">Ticked sites:</span>
    <button type="submit" class="secondary" name="action" value="backup">Back up now</button>
    <button type="submit" class="secondary" name="action" value="refresh">Refresh now</button>
    <label for="selection-tag">Tag to add or remove</label>
    <input id="selection-tag" name="tag" size="12" maxlength="100" />
    <button type="submit" class="secondary" name="action" value="add-tag">Add tag</button>
    <button type="submit" class="secondary" name="action" value="remove-tag">Remove tag</button>
    <label for="selection-plugin">Plugin (slug)</label>
    <input id="selection-plugin" name="plugin" size="16" maxlength="200" placeholder="akismet" />
    <label class="check"><input type="checkbox" name="activate" value="yes" /> activate</label>
    <button type="submit" class="secondary" name="action" value="install-plugin">Install plugin</button>
    <label for="selection-theme">Theme (slug)</label>
    <input id="selection-theme" name="theme" size="16" maxlength="200" placeholder="twentytwentyfour" />
    <label class="check"><input type="checkbox" name="activate-theme" value="yes" /> activate</label>
    <button type="submit" class="secondary" name="action" value="install-theme">Install theme</button>
  </form>`;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export function createSiteSelectionRoutes(
  deps: Pick<DashboardServices, 'sites' | 'backups' | 'fleetRefresh' | 'fleetActions'>,
) {
  const app = new Hono<DashboardEnv>();
  app.post('/sites/selection', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const asked = typeof form.back === 'string' && /^\/(\?[\x21-\x7e]*)?$/.test(form.back) ? form.back : '/';
    const ids = [...new Set([form.site ?? []].flat().filter((id): id is string => typeof id === 'string'))];
    const action = actions.find((name) => name === form.action);
    const done = (kind: 'ok' | 'error', text: string) => {
      setFlash(c, { kind, text });
      return c.redirect(asked, 303);
    };
    if (!action) return done('error', 'Choose what to do with the ticked sites.');
    if (ids.length === 0) return done('error', 'Tick one or more sites first.');
    if (ids.length > MAX_SELECTED) return done('error', `Tick at most ${MAX_SELECTED} sites at once.`);
    const found = await Promise.all(ids.map((id) => deps.sites.find(id)));
    const known = ids.filter((_, index) => found[index] !== undefined);
    if (known.length === 0) return done('error', 'None of the ticked sites exists any more.');
    if (action === 'install-plugin' || action === 'install-theme') {
      // A fleet action (a job): its page shows each site's result as it comes.
      const type = action === 'install-plugin' ? 'plugin' : 'theme';
      const slug = form[type];
      const parsed = FleetActionInput.safeParse({
        action: 'install',
        type,
        slug: typeof slug === 'string' ? slug.trim() : '',
        activate: form[type === 'plugin' ? 'activate' : 'activate-theme'] === 'yes',
        sites: known,
      });
      if (!parsed.success) return done('error', `Not a ${type} slug: ${parsed.error.issues[0]?.message ?? 'invalid'}.`);
      try {
        const started = await deps.fleetActions.start(parsed.data, c.get('actor'));
        setFlash(c, { kind: 'ok', text: `Installing ${started.slug} on ${plural(started.counts.total, 'site')}.` });
        return c.redirect(`/fleet/actions/${started.id}`, 303);
      } catch (error) {
        if (!isAppError(error)) throw error;
        return done('error', error.detail);
      }
    }
    return done(...(await apply(deps, action, known, form.tag)));
  });
  return app;
}

async function apply(
  deps: Pick<DashboardServices, 'sites' | 'backups' | 'fleetRefresh'>,
  action: Exclude<SelectionAction, 'install-plugin' | 'install-theme'>,
  ids: string[],
  rawTag: unknown,
): Promise<['ok' | 'error', string]> {
  if (action === 'add-tag' || action === 'remove-tag') {
    const parsed = SiteTagsInput.shape.tags.safeParse([typeof rawTag === 'string' ? rawTag.trim() : '']);
    if (!parsed.success) return ['error', `Not a tag: ${parsed.error.issues[0]?.message ?? 'invalid'}.`];
    const [tag] = parsed.data;
    const current = await deps.sites.tagsOf(ids);
    const refused: string[] = [];
    for (const id of ids) {
      const tags = current.get(id) ?? [];
      const next = action === 'add-tag' ? [...tags, tag!] : tags.filter((t) => t !== tag);
      const checked = SiteTagsInput.shape.tags.safeParse(next);
      if (!checked.success) refused.push(id);
      else await deps.sites.setTags(id, checked.data);
    }
    const changed = ids.length - refused.length;
    const verb =
      action === 'add-tag'
        ? `Tagged ${plural(changed, 'site')} ${tag}`
        : `Removed ${tag} from ${plural(changed, 'site')}`;
    return refused.length === 0
      ? ['ok', `${verb}.`]
      : ['error', `${verb}; ${plural(refused.length, 'site')} already have the most tags a site can.`];
  }
  if (action === 'refresh') {
    const found = await Promise.all(ids.map((id) => deps.sites.find(id)));
    const connected = ids.filter((_, index) => found[index]?.state === 'connected');
    if (connected.length === 0) return ['error', 'None of the ticked sites is connected.'];
    await deps.fleetRefresh.refresh({ sites: connected, tag: [] });
    return ['ok', `Reading ${plural(connected.length, 'site')} again (plugins, themes, updates offered).`];
  }
  let started = 0;
  const refused: string[] = [];
  for (const id of ids) {
    try {
      await deps.backups.request(id);
      started++;
    } catch (error) {
      if (!isAppError(error)) throw error;
      refused.push(error.detail);
    }
  }
  const text = `Backups started on ${plural(started, 'site')}; each shows on its site’s page as it runs.`;
  return refused.length === 0
    ? ['ok', text]
    : ['error', `${text} Not started: ${refused.slice(0, 3).join('; ')}${refused.length > 3 ? '; …' : ''}`];
}
