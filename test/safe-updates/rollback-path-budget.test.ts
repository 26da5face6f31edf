import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createPlainRestorePoints, createRollbackPaths } from '../../src/safe-updates/index.js';
import { systemClock } from '../../src/shared/clock.js';
import { createSecretBox } from '../../src/shared/secret-box.js';
import type { ConnectedSite } from '../../src/wordpress/site-access.js';
import type { SiteHttp, SiteResponse } from '../../src/wordpress/site-http.js';

/**
 * The standalone rollback path allows 30 requests a minute per site (connector/sitewarden-rollback.php
 * RATE_LIMIT, counted before anything else, 429 with `Retry-After` past it). Every plain update's
 * restore point makes sure the path answers first: a plain bulk run of many items on one site must
 * not spend the site's minute on those probes, and a 429 is waited out, not a failure.
 */
const SITE_URL = 'http://site.test';
const PATH_URL = `${SITE_URL}/wp-content/plugins/sitewarden-connector/sitewarden-rollback.php`;

/** The path as the connector answers it: rate-limited per minute, secret by its SHA-256, restores of what was saved. */
function fakeSite({ limit = 30, retryAfter = '60' }: { limit?: number; retryAfter?: string } = {}) {
  const state = {
    hash: null as string | null,
    /** Every request at the path, rate-limited or not. */
    pathRequests: [] as string[],
    windowCount: 0,
    /** The next requests answered 429 whatever the window holds (another caller spent it). */
    limited: 0,
    saved: 0,
    /** What the next restores answer instead (then the path answers as usual). */
    restoreAnswers: [] as number[],
  };
  const answer = (status: number, json: unknown, headers: Record<string, string> = {}): SiteResponse => {
    const body = Buffer.from(JSON.stringify(json));
    return {
      status,
      url: PATH_URL,
      headers,
      body,
      text: () => body.toString('utf8'),
      json: <T>() => JSON.parse(body.toString('utf8')) as T,
    };
  };
  const http = {
    async request(req: { url: string; json?: unknown; headers?: Record<string, string> }) {
      expect(req.url).toBe(PATH_URL);
      const json = req.json as { action: string; id?: string; target?: string };
      state.pathRequests.push(json.action);
      if (++state.windowCount > limit || state.limited-- > 0)
        return answer(429, { code: 'rate_limited' }, { 'retry-after': retryAfter });
      const secret = req.headers?.['x-sitewarden-rollback-secret'];
      if (!secret || !state.hash || createHash('sha256').update(secret).digest('hex') !== state.hash)
        return answer(401, { code: 'unauthorized' });
      if (json.action === 'status') return answer(200, { saved: [] });
      if (json.action === 'restore') {
        const status = state.restoreAnswers.shift();
        if (status) return answer(status, { code: 'forced' });
        return answer(200, { restored: json.target, already: false });
      }
      return answer(400, { code: 'unknown_action' });
    },
    stream: () => Promise.reject(new Error('not used')),
    close: () => Promise.resolve(),
  } as unknown as SiteHttp;

  // The connector's routes inside WordPress: the secret's hash, and restore points.
  const session = {
    async call(
      _method: string,
      route: string,
      options: { json?: { hash?: string }; schema: { parse(v: unknown): unknown } },
    ) {
      if (route === 'sitewarden/v1/rollback/secret') {
        state.hash = options.json!.hash!;
        return options.schema.parse({ provisioned: true });
      }
      if (route === 'sitewarden/v1/rollback/save') {
        state.saved++;
        const id = `20260101000000-${randomBytes(4).toString('hex')}`;
        return options.schema.parse({ id, target: 'plugins/akismet', bytes: 10 });
      }
      throw new Error(`unexpected route ${route}`);
    },
  };
  const site = { site: { id: 'site_1', url: SITE_URL }, session, connector: {} } as unknown as ConnectedSite;
  return { state, http, site };
}

function restorePointsOn(fake: ReturnType<typeof fakeSite>, waits: number[] = []) {
  const secrets = new Map<string, string>();
  const paths = createRollbackPaths({
    repository: {
      readSecret: async (siteId) => secrets.get(siteId),
      writeSecret: async (siteId, sealed) => void secrets.set(siteId, sealed),
    },
    http: fake.http,
    secrets: createSecretBox(randomBytes(32)),
    clock: systemClock,
    operationTimeoutMs: 5_000,
    sleep: async (ms) => {
      waits.push(ms);
      // The path's minute, over at once.
      fake.state.windowCount = 0;
    },
  });
  const access = {
    read: <T>(_siteId: string, work: (site: ConnectedSite) => Promise<T>) => work(fake.site),
    operate: <T>(_siteId: string, work: (site: ConnectedSite) => Promise<T>) => work(fake.site),
  };
  return { paths, points: createPlainRestorePoints({ access, paths, operationTimeoutMs: 5_000 }) };
}

describe('the standalone rollback path’s budget', () => {
  it('40 plain updates on one site take their 40 restore points with one request at the path', async () => {
    const fake = fakeSite();
    const { points } = restorePointsOn(fake);
    const taken = [];
    for (let item = 0; item < 40; item++)
      taken.push(await points.beforeOn(fake.site, 'plugin', `plugin-${item}`, `plugin-${item}/plugin-${item}.php`));
    expect(taken.filter((point) => point.restorePoint === null)).toEqual([]);
    expect(fake.state.saved).toBe(40);
    expect(fake.state.pathRequests).toEqual(['status']);
  });

  it('waits out a 429 for its Retry-After (bounded) rather than failing', async () => {
    // Another caller (a safe update, a person) spent the site's minute.
    const fake = fakeSite({ retryAfter: '7' });
    const waits: number[] = [];
    const { points } = restorePointsOn(fake, waits);
    fake.state.limited = 1;
    const taken = await points.beforeOn(fake.site, 'plugin', 'akismet', 'akismet/akismet.php');
    expect(taken).toMatchObject({ restorePoint: { target: 'plugins/akismet' } });
    expect(waits).toEqual([7_000]);
    expect(fake.state.pathRequests).toEqual(['status', 'status']);

    // A Retry-After past the bound waits the bound (the path's minute), and gives up after two waits.
    const stubborn = fakeSite({ retryAfter: '86400' });
    const stubbornWaits: number[] = [];
    const { points: stubbornPoints } = restorePointsOn(stubborn, stubbornWaits);
    stubborn.state.limited = 100;
    const refused = await stubbornPoints.beforeOn(stubborn.site, 'plugin', 'akismet', 'akismet/akismet.php');
    expect(refused).toMatchObject({ restorePoint: null, reason: expect.stringContaining('429') });
    expect(stubbornWaits).toEqual([60_000, 60_000]);
    expect(stubborn.state.pathRequests).toEqual(['status', 'status', 'status']);
    expect(stubborn.state.saved).toBe(0);
  });

  it('forgets a proven path when it fails, and asks it again; a 401 from a kept path is tried once more, freshly', async () => {
    const fake = fakeSite();
    const { paths, points } = restorePointsOn(fake);
    await points.beforeOn(fake.site, 'plugin', 'akismet', 'akismet/akismet.php');
    expect(fake.state.pathRequests).toEqual(['status']);

    // The path answers 500 to a restore: forgotten, the next use asks it again.
    fake.state.restoreAnswers.push(500);
    const failing = await paths.rollbackPath(fake.site);
    expect((await failing.restore('20260101000000-00000000', 'plugins/akismet')).status).toBe(500);
    await points.beforeOn(fake.site, 'plugin', 'akismet', 'akismet/akismet.php');
    expect(fake.state.pathRequests).toEqual(['status', 'restore', 'status']);

    // The site lost its secret since (a restore of an old backup): the kept path's 401 is retried after a fresh probe, which provides it again.
    fake.state.hash = 'lost';
    await expect(
      points.rollBack('site_1', { id: '20260101000000-00000000', target: 'plugins/akismet' }),
    ).resolves.toBeUndefined();
    expect(fake.state.pathRequests).toEqual(['status', 'restore', 'status', 'restore', 'status', 'status', 'restore']);
  });
});
