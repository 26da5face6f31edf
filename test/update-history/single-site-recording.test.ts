import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { updateProblems } from '../../src/inventory/index.js';
import { createPluginsService } from '../../src/plugins/plugins.service.js';
import { createThemesService } from '../../src/themes/themes.service.js';
import {
  createSingleSiteRecording,
  createUpdateHistoryRepository,
  createUpdateRecorder,
  type RestorePoints,
} from '../../src/update-history/index.js';
import type { ConnectedSite, SiteAccess } from '../../src/wordpress/site-access.js';
import { createWordPressUpdatesService } from '../../src/wordpress-updates/index.js';
import { createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';

/**
 * The plugins, themes and core services record their own attempts in the update history (issue 35:
 * no feature wraps another's service): built with the history's single-site recording, their update
 * writes the row, with who asked and the restore point taken first; `apply` (a bulk update's path,
 * which records in its own write batch) writes none.
 */
describe('single-site updates record themselves', () => {
  let t: TestApp;
  let siteId: string;
  beforeEach(() => {
    t = createTestApp();
    siteId = insertConnectedSite(t, { name: 'Alpha', wordpressVersion: '6.4.2' });
  });
  afterEach(() => t.close());

  // The site refuses every operation: the attempt fails, after its restore point was taken.
  const refused = updateProblems.operationFailed.create('the site could not carry out the operation');
  const access = {
    operate: () => Promise.reject(refused),
    read: () => Promise.reject(refused),
  } as unknown as SiteAccess;
  const taken: string[] = [];
  const restorePoints: Pick<RestorePoints, 'before' | 'discard'> = {
    before: (_siteId, type, slug) => {
      taken.push(`${type}:${slug}`);
      return Promise.resolve({ restorePoint: { id: `rp_${slug}`, target: slug } });
    },
    discard: () => Promise.resolve(),
  };
  const history = () =>
    createSingleSiteRecording({
      recorder: createUpdateRecorder({
        repository: createUpdateHistoryRepository(t.state),
        clock: t.clock,
      }),
      inventories: t.services.inventories,
      sites: t.services.sitesRepository,
      restorePoints,
    });
  const rows = () => createUpdateHistoryRepository(t.state).list({ siteId, limit: 10 });
  const requestedBy = { kind: 'user', id: 'usr_alice' } as const;

  it('a plugin or theme update writes its row, failed, naming who asked and its restore point', async () => {
    const events = t.services.events;
    const plugins = createPluginsService({ access, events, history: history() });
    const themes = createThemesService({ access, events, history: history() });
    await expect(plugins.update(siteId, 'akismet', { requestedBy })).rejects.toBe(refused);
    await expect(themes.update(siteId, 'twentytwentyfour', { requestedBy })).rejects.toBe(refused);
    expect(taken).toContain('plugin:akismet');
    expect(taken).toContain('theme:twentytwentyfour');
    const [theme, plugin] = await rows();
    expect(plugin).toMatchObject({
      type: 'plugin',
      slug: 'akismet',
      result: 'failed',
      reason: 'site-operation-failed',
      triggerKind: 'user',
      triggerId: 'usr_alice',
      restorePoint: JSON.stringify({ id: 'rp_akismet', target: 'akismet' }),
    });
    expect(theme).toMatchObject({ type: 'theme', slug: 'twentytwentyfour', result: 'failed', triggerKind: 'user' });
  });

  it('a core and a translations update write theirs; core from the version the site last reported', async () => {
    const wordpressUpdates = createWordPressUpdatesService({ access, events: t.services.events, history: history() });
    await expect(wordpressUpdates.updateCore(siteId, { version: '6.5.0', requestedBy })).rejects.toBe(refused);
    await expect(wordpressUpdates.updateTranslations(siteId, { requestedBy })).rejects.toBe(refused);
    const [translations, core] = await rows();
    expect(core).toMatchObject({
      type: 'core',
      slug: null,
      fromVersion: '6.4.2',
      toVersion: '6.5.0',
      result: 'failed',
      triggerId: 'usr_alice',
      restorePoint: JSON.stringify({ id: 'rp_wordpress', target: 'wordpress' }),
    });
    expect(translations).toMatchObject({ type: 'translations', result: 'failed', restorePoint: null });
  });

  it('`apply` (a bulk update records its items itself) writes no row', async () => {
    const events = t.services.events;
    const plugins = createPluginsService({ access, events, history: history() });
    const wordpressUpdates = createWordPressUpdatesService({ access, events, history: history() });
    // A plugin's one update on a site the bulk update holds, whose connector refuses too.
    const held = {
      site: { id: siteId, url: 'https://alpha.example' },
      connector: { updateExpecting: () => Promise.reject(refused) },
    } as unknown as ConnectedSite;
    const akismet = { slug: 'akismet', file: 'akismet/akismet.php', version: '1.0.0', update: null };
    await expect(plugins.updateExpecting(held, akismet, null)).rejects.toBe(refused);
    await expect(wordpressUpdates.applyCore(siteId)).rejects.toBe(refused);
    await expect(wordpressUpdates.applyTranslations(siteId)).rejects.toBe(refused);
    expect(await rows()).toEqual([]);
  });
});
