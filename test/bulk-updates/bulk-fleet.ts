import { expect } from 'vitest';
import type { ServiceConfig } from '../../src/services.js';
import { type TestApp, type createFakeClock, createTestApp, setSiteTags } from '../support/test-app.js';
import { createUpdateWatch, startUpdatableSite, type UpdateWatch } from './updatable-fake.js';

/** A test app with fake WordPress sites whose plugin and theme versions really change, for bulk updates. */
const closers: (() => Promise<void>)[] = [];
/** For each test file's afterEach and afterAll: closes every app and site `fleet` started. */
export async function closeFleets(): Promise<void> {
  while (closers.length > 0) await closers.pop()!();
}

export async function fleet(
  count: number,
  options: {
    config?: Partial<ServiceConfig>;
    failing?: number[];
    tags?: (index: number) => string[];
    clock?: ReturnType<typeof createFakeClock>;
    /** Each site's connector version (default: one whose updates take the version expected). */
    connectors?: string[];
  } = {},
) {
  const t = createTestApp({ config: { siteConcurrency: 16, ...options.config }, clock: options.clock });
  closers.push(() => t.close());
  const watch = createUpdateWatch();
  const sites: {
    id: string;
    state: { plugin: string; theme: string; failPlugins: boolean };
    requests: string[];
  }[] = [];
  for (let index = 0; index < count; index++) {
    const { site, state } = await startUpdatableSite(watch, {
      failPlugins: options.failing?.includes(index),
      connector: options.connectors?.[index],
    });
    closers.push(site.close);
    const connected = await t.call('POST', '/api/sites', {
      json: { url: site.url, username: site.username, applicationPassword: site.applicationPassword },
    });
    expect(connected.status, connected.text).toBe(201);
    const id = connected.json.id as string;
    if (options.tags) setSiteTags(t, id, options.tags(index));
    await t.services.sync.syncNow(id);
    sites.push({ id, state, requests: site.requests });
  }
  return { t, watch, sites };
}

export const apply = (t: TestApp, json: unknown) => t.call('POST', '/api/fleet/updates/apply', { json });
export const finished = async (t: TestApp, id: string) => {
  await t.services.bulkUpdates.idle();
  const run = await t.call('GET', `/api/fleet/updates/runs/${id}`, { token: t.readToken });
  expect(run.status, run.text).toBe(200);
  return run.json;
};
/** Holds every update until `limit` run together (or it is clear no more will come), then a little longer. */
export const holdUntil = (watch: UpdateWatch, limit: number) => {
  let opened = false;
  watch.hold = async () => {
    for (let waited = 0; !opened && watch.inFlight < limit && waited < 2_000; waited += 10)
      await new Promise((resolve) => setTimeout(resolve, 10));
    opened = true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  };
};
/** Every update waits until the test opens the gate; `first` settles when the first one arrives. */
export const gated = (watch: UpdateWatch) => {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let arrived!: () => void;
  const first = new Promise<void>((resolve) => (arrived = resolve));
  watch.hold = () => {
    arrived();
    return gate;
  };
  return { open, first };
};
