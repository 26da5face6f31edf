import { fakePlugin, startFakeWordPress, type FakeWordPress } from '../support/fake-wordpress/index.js';
import { sendJson } from '../support/fake-wordpress/backup-routes.js';
import type { SiteTls } from '../support/fake-wordpress/loopback-server.js';

/** Watches every fake site's update requests at once: how many run together, and holds them when asked. */
export interface UpdateWatch {
  inFlight: number;
  maxInFlight: number;
  /** Each update waits for this before it answers (a gate the test opens). */
  hold?: () => Promise<void>;
}
export const createUpdateWatch = (): UpdateWatch => ({ inFlight: 0, maxInFlight: 0 });

/** The connector release whose update routes take the version expected (`expectedVersion`). */
export const EXPECTED_VERSION_CONNECTOR = '1.5.0';

/**
 * A fake WordPress whose akismet plugin (1.0.0 → 1.1.0) and twentytwentythree theme (1.0.0 →
 * 1.1.0) really change version when updated, so lists and update offers follow; `failPlugins`
 * makes its plugin updates fail as a site that cannot write its files answers. Its connector is
 * 1.5.0 (updates that name the version expected, as connector/ answers them) unless `connector`
 * names an older one, whose update routes ignore `expectedVersion`.
 */
export async function startUpdatableSite(
  watch: UpdateWatch,
  options: { failPlugins?: boolean; connector?: string; tls?: SiteTls } = {},
) {
  const state = { plugin: '1.0.0', theme: '1.0.0', failPlugins: options.failPlugins ?? false };
  const connector = options.connector ?? EXPECTED_VERSION_CONNECTOR;
  const expectsVersions = connector === EXPECTED_VERSION_CONNECTOR;
  const site: FakeWordPress = await startFakeWordPress({ tls: options.tls });
  const answers = site.answers;
  const info = answers['GET sitewarden/v1/info'] as { features: string[] };
  answers['GET sitewarden/v1/info'] = {
    ...info,
    connector,
    features: expectsVersions ? [...info.features, 'updates/expected-version'] : info.features,
  };
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
  const offered = (kind: 'plugin' | 'theme') =>
    state[kind] === '1.0.0' ? { version: state[kind], newVersion: '1.1.0' } : null;
  const update =
    (kind: 'plugin' | 'theme') =>
    async ({ res, json }: { res: Parameters<typeof sendJson>[0]; json?: { expectedVersion?: string } }) => {
      const expected = expectsVersions ? json?.expectedVersion : undefined;
      if (expected !== undefined) {
        // As the connector: refused, nothing changed, when the offer is not the one expected.
        const offer = offered(kind);
        if (!offer || (expected !== '' && offer.newVersion !== expected))
          return sendJson(res, 200, {
            result: 'refused',
            code: 'sitewarden_offer_changed',
            message: offer ? `offered at ${offer.newVersion}, not ${expected}` : 'no update is offered',
            version: state[kind],
            offer,
          });
      }
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
        const updated =
          kind === 'plugin'
            ? { plugin: 'akismet/akismet.php', previousVersion, version: '1.1.0', active: true }
            : { stylesheet: 'twentytwentythree', previousVersion, version: '1.1.0', active: false };
        sendJson(
          res,
          200,
          expected === undefined
            ? updated
            : { result: 'updated', ...updated, offer: null, ...(kind === 'plugin' ? { requires: [] } : {}) },
        );
      } finally {
        watch.inFlight--;
      }
    };
  answers['POST sitewarden/v1/plugins/update'] = update('plugin');
  answers['POST sitewarden/v1/themes/update'] = update('theme');
  return { site, state };
}
