import { fakePlugin, startFakeWordPress, type FakeWordPress } from '../support/fake-wordpress/index.js';
import { sendJson } from '../support/fake-wordpress/backup-routes.js';

/** Watches every fake site's update requests at once: how many run together, and holds them when asked. */
export interface UpdateWatch {
  inFlight: number;
  maxInFlight: number;
  /** Each update waits for this before it answers (a gate the test opens). */
  hold?: () => Promise<void>;
}
export const createUpdateWatch = (): UpdateWatch => ({ inFlight: 0, maxInFlight: 0 });

/**
 * A fake WordPress whose akismet plugin (1.0.0 → 1.1.0) and twentytwentythree theme (1.0.0 →
 * 1.1.0) really change version when updated, so lists and update offers follow; `failPlugins`
 * makes its plugin updates fail as a site that cannot write its files answers.
 */
export async function startUpdatableSite(watch: UpdateWatch, options: { failPlugins?: boolean } = {}) {
  const state = { plugin: '1.0.0', theme: '1.0.0', failPlugins: options.failPlugins ?? false };
  const site: FakeWordPress = await startFakeWordPress();
  const answers = site.answers;
  answers['GET wp/v2/plugins'] = ({ res }: { res: Parameters<typeof sendJson>[0] }) =>
    sendJson(res, 200, [{ ...fakePlugin('akismet', 'active'), version: state.plugin }, fakePlugin('hello-dolly')]);
  answers['GET wp/v2/themes'] = ({ res }: { res: Parameters<typeof sendJson>[0] }) =>
    sendJson(res, 200, [
      {
        stylesheet: 'twentytwentyfour',
        template: 'twentytwentyfour',
        status: 'active',
        name: { raw: 'TT4' },
        version: '1.0.0',
      },
      {
        stylesheet: 'twentytwentythree',
        template: 'twentytwentythree',
        status: 'inactive',
        name: { raw: 'TT3' },
        version: state.theme,
      },
    ]);
  answers['GET sitewarden/v1/updates'] = ({ res }: { res: Parameters<typeof sendJson>[0] }) =>
    sendJson(res, 200, {
      checkedAt: new Date().toISOString(),
      plugins:
        state.plugin === '1.0.0'
          ? { 'akismet/akismet.php': { slug: 'akismet', version: state.plugin, newVersion: '1.1.0' } }
          : {},
      themes: state.theme === '1.0.0' ? { twentytwentythree: { version: state.theme, newVersion: '1.1.0' } } : {},
    });
  const update =
    (kind: 'plugin' | 'theme') =>
    async ({ res }: { res: Parameters<typeof sendJson>[0] }) => {
      watch.inFlight++;
      watch.maxInFlight = Math.max(watch.maxInFlight, watch.inFlight);
      try {
        await watch.hold?.();
        if (kind === 'plugin' && state.failPlugins)
          return sendJson(res, 500, {
            code: 'sitewarden_filesystem_unavailable',
            message: 'WordPress cannot write to wp-content/plugins',
            data: { status: 500 },
          });
        const previousVersion = state[kind];
        state[kind] = '1.1.0';
        sendJson(
          res,
          200,
          kind === 'plugin'
            ? { plugin: 'akismet/akismet.php', previousVersion, version: '1.1.0', active: true }
            : { stylesheet: 'twentytwentythree', previousVersion, version: '1.1.0', active: false },
        );
      } finally {
        watch.inFlight--;
      }
    };
  answers['POST sitewarden/v1/plugins/update'] = update('plugin');
  answers['POST sitewarden/v1/themes/update'] = update('theme');
  return { site, state };
}
