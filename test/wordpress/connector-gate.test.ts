import { afterEach, describe, expect, it } from 'vitest';
import { startFakeWordPress } from '../support/fake-wordpress/index.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/**
 * The connector's version gate trusts the version the last sync stored: an operation that version
 * covers goes straight to its route. A site whose connector was removed or downgraded since then
 * still gets the same problem as before (connector-missing, connector-outdated), read afresh.
 */

let t: TestApp;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
  await t?.close();
});

async function connected() {
  const site = await startFakeWordPress();
  closers.push(site.close);
  t = createTestApp();
  const answer = await t.call('POST', '/api/sites', {
    json: { url: site.url, username: 'admin', applicationPassword: 'abcd efgh ijkl mnop qrst uvwx' },
  });
  expect(answer.status, answer.text).toBe(201);
  const id = answer.json.id as string;
  await t.services.sync.syncNow(id);
  expect((await t.call('GET', `/api/sites/${id}`, { token: t.readToken })).json.versions.connector).toBe('1.2.0');
  return { site, id };
}

describe('the connector version gate', () => {
  it('updates a plugin without reading the connector info first when the stored version covers it', async () => {
    const { site, id } = await connected();
    site.requests.length = 0;
    const updated = await t.call('POST', `/api/sites/${id}/plugins/akismet/update`);
    expect(updated.status, updated.text).toBe(200);
    // (the inventory refresh after the update reads the info for the versions it stores)
    const update = site.requests.indexOf('sitewarden/v1/plugins/update');
    expect(update).toBeGreaterThan(0);
    expect(site.requests.slice(0, update)).not.toContain('sitewarden/v1/info');
  });

  it('answers connector-missing when the connector was removed since the last sync', async () => {
    const { site, id } = await connected();
    for (const key of Object.keys(site.answers)) if (key.includes('sitewarden/v1/')) delete site.answers[key];
    const answer = await t.call('POST', `/api/sites/${id}/plugins/akismet/update`);
    expect(answer.status, answer.text).toBe(422);
    expect(answer.json.type).toBe('/problems/connector-missing');
  });

  it('answers connector-outdated when the connector was downgraded below the feature since the last sync', async () => {
    const { site, id } = await connected();
    delete site.answers['POST sitewarden/v1/themes/update'];
    site.answers['GET sitewarden/v1/info'] = {
      ...(site.answers['GET sitewarden/v1/info'] as object),
      connector: '0.9.0',
    };
    const answer = await t.call('POST', `/api/sites/${id}/themes/twentytwentythree/update`);
    expect(answer.status, answer.text).toBe(422);
    expect(answer.json).toMatchObject({ type: '/problems/connector-outdated', connectorVersion: '0.9.0' });
  });
});
