import { afterEach, describe, expect, it } from 'vitest';
import { sendJson } from '../support/fake-wordpress/backup-routes.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { createUpdateWatch, EXPECTED_VERSION_CONNECTOR, startUpdatableSite } from '../bulk-updates/updatable-fake.js';

/**
 * The connector client's one update of a plugin or theme that names the version expected
 * (`updateExpecting`): connector 1.5.0+ checks the offer in the update request itself; an older one,
 * whose update route ignores `expectedVersion`, has its offer read first and the item updated only
 * when it matches, answered the same way (updated, or refused with what the site has and offers).
 */

let t: TestApp;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
  await t?.close();
});

/** A site with akismet 1.0.0 → 1.1.0 and twentytwentythree 1.0.0 → 1.1.0, its connector `connector`, synced once. */
async function connected(connector: string) {
  const { site, state } = await startUpdatableSite(createUpdateWatch(), { connector });
  closers.push(site.close);
  t = createTestApp();
  const answer = await t.call('POST', '/api/sites', {
    json: { url: site.url, username: site.username, applicationPassword: site.applicationPassword },
  });
  expect(answer.status, answer.text).toBe(201);
  const id = answer.json.id as string;
  await t.services.sync.syncNow(id);
  expect((await t.services.sitesRepository.findById(id))?.connectorVersion).toBe(connector);
  /** The requests `work` made of the site, through a connector that knows the version the last sync stored. */
  const requestsOf = async <T>(
    work: (connector: Awaited<ReturnType<typeof t.services.access.connected>>['connector']) => Promise<T>,
  ) => {
    const before = site.requests.length;
    const answered = await t.services.access.read(id, ({ connector }) => work(connector));
    return { answered, requests: site.requests.slice(before) };
  };
  return { id, site, state, requestsOf };
}

describe('updateExpecting on a connector older than 1.5.0', () => {
  it('reads the offer, then updates when it is the one expected', async () => {
    const { state, requestsOf } = await connected('1.4.0');
    const plugin = await requestsOf((connector) => connector.updateExpecting('plugin', 'akismet/akismet.php', '1.1.0'));
    expect(plugin.answered).toMatchObject({
      result: 'updated',
      plugin: 'akismet/akismet.php',
      previousVersion: '1.0.0',
      version: '1.1.0',
      active: true,
    });
    expect(plugin.requests).toEqual(['sitewarden/v1/updates', 'sitewarden/v1/plugins/update']);
    const theme = await requestsOf((connector) => connector.updateExpecting('theme', 'twentytwentythree', null));
    expect(theme.answered).toMatchObject({ result: 'updated', previousVersion: '1.0.0', version: '1.1.0' });
    expect(theme.requests).toEqual(['sitewarden/v1/updates', 'sitewarden/v1/themes/update']);
    // What the site holds now.
    expect(state).toMatchObject({ plugin: '1.1.0', theme: '1.1.0' });
  });

  it('passes on only the fields of the update answer it checked (the site is untrusted)', async () => {
    const { site, state, requestsOf } = await connected('1.4.0');
    // The old route's answer, with what a 1.5.0 answer adds made up: not an answer to trust here.
    site.answers['POST sitewarden/v1/plugins/update'] = ({ res }: { res: Parameters<typeof sendJson>[0] }) => {
      state.plugin = '1.1.0';
      sendJson(res, 200, {
        plugin: 'akismet/akismet.php',
        previousVersion: '1.0.0',
        version: '1.1.0',
        active: true,
        offer: { version: '1', newVersion: '<b>' },
        requires: ['../x'],
      });
    };
    const plugin = await requestsOf((connector) => connector.updateExpecting('plugin', 'akismet/akismet.php', null));
    expect(plugin.answered).toEqual({
      result: 'updated',
      plugin: 'akismet/akismet.php',
      previousVersion: '1.0.0',
      version: '1.1.0',
      active: true,
    });
  });

  it('refuses, changing nothing, when the site offers another version', async () => {
    const { state, requestsOf } = await connected('1.4.0');
    const refused = await requestsOf((connector) =>
      connector.updateExpecting('plugin', 'akismet/akismet.php', '9.9.9'),
    );
    expect(refused.answered).toEqual({
      result: 'refused',
      code: 'sitewarden_offer_changed',
      message: 'akismet/akismet.php is offered at 1.1.0, not 9.9.9.',
      version: '1.0.0',
      offer: { version: '1.0.0', newVersion: '1.1.0' },
    });
    expect(refused.requests).toEqual(['sitewarden/v1/updates']);
    expect(state.plugin).toBe('1.0.0');
  });

  it('refuses when nothing is offered any more, with the version installed as WordPress lists it', async () => {
    const { state, requestsOf } = await connected('1.4.0');
    // Updated behind Sitewarden's back: nothing is offered.
    state.plugin = '1.1.0';
    state.theme = '1.1.0';
    const plugin = await requestsOf((connector) => connector.updateExpecting('plugin', 'akismet/akismet.php', null));
    expect(plugin.answered).toMatchObject({ result: 'refused', version: '1.1.0', offer: null });
    expect(plugin.requests).toEqual(['sitewarden/v1/updates', 'wp/v2/plugins']);
    const theme = await requestsOf((connector) => connector.updateExpecting('theme', 'twentytwentythree', '1.1.0'));
    expect(theme.answered).toMatchObject({ result: 'refused', version: '1.1.0', offer: null });
    // Not installed: no version.
    const gone = await requestsOf((connector) => connector.updateExpecting('plugin', 'gone/gone.php', null));
    expect(gone.answered).toMatchObject({ result: 'refused', version: null, offer: null });
  });

  it('reads the connector info first when no sync stored its version, then goes the same way', async () => {
    const { id, state, requestsOf } = await connected('1.4.0');
    await t.services.sitesRepository.update(id, { connectorVersion: null });
    const updated = await requestsOf((connector) =>
      connector.updateExpecting('plugin', 'akismet/akismet.php', '1.1.0'),
    );
    expect(updated.answered).toMatchObject({ result: 'updated', version: '1.1.0' });
    expect(updated.requests).toEqual(['sitewarden/v1/info', 'sitewarden/v1/updates', 'sitewarden/v1/plugins/update']);
    expect(state.plugin).toBe('1.1.0');
  });
});

describe('updateExpecting on connector 1.5.0', () => {
  it('makes one request, the site checking the offer itself', async () => {
    const { id, state, requestsOf } = await connected(EXPECTED_VERSION_CONNECTOR);
    const refused = await requestsOf((connector) =>
      connector.updateExpecting('plugin', 'akismet/akismet.php', '9.9.9'),
    );
    expect(refused.answered).toMatchObject({ result: 'refused', version: '1.0.0' });
    expect(refused.requests).toEqual(['sitewarden/v1/plugins/update']);
    expect(state.plugin).toBe('1.0.0');
    // Unknown stored version: the info says 1.5.0, so the same one request follows it.
    await t.services.sitesRepository.update(id, { connectorVersion: null });
    const updated = await requestsOf((connector) =>
      connector.updateExpecting('plugin', 'akismet/akismet.php', '1.1.0'),
    );
    expect(updated.answered).toMatchObject({ result: 'updated', version: '1.1.0', offer: null });
    expect(updated.requests).toEqual(['sitewarden/v1/info', 'sitewarden/v1/plugins/update']);
    expect(state.plugin).toBe('1.1.0');
  });
});
