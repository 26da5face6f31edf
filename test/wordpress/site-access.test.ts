import { describe, expect, it } from 'vitest';
import { createSiteTaskQueue } from '../../src/jobs/site-task-queue.js';
import { defineProblem, isProblem } from '../../src/shared/errors.js';
import { createSiteAccess, type SiteDirectory } from '../../src/wordpress/site-access.js';
import type { SiteCredentials, WordPressClient, WordPressSession } from '../../src/wordpress/wordpress-client.js';

/** SiteAccess lives in the base: the sites feature plugs in through SiteDirectory, the inventory through afterOperation. */
describe('SiteAccess', () => {
  const notConnected = defineProblem('site-not-connected', 409, 'The site is not connected');
  const directory: SiteDirectory = {
    async connected(siteId) {
      if (siteId !== 'site_a') throw notConnected.create(`site ${siteId} is pending, not connected`);
      return {
        site: { id: 'site_a', url: 'https://a.example' },
        credentials: { restUrl: 'https://a.example/wp-json/', username: 'admin', applicationPassword: 'secret' },
      };
    },
  };

  function setup() {
    const sessionsFor: SiteCredentials[] = [];
    const wordpress: WordPressClient = {
      session(credentials) {
        sessionsFor.push(credentials);
        return {} as WordPressSession;
      },
    };
    const refreshed: string[] = [];
    const access = createSiteAccess({
      directory,
      wordpress,
      queue: createSiteTaskQueue({ concurrency: 4 }),
      operationTimeoutMs: 1000,
      afterOperation: async (siteId) => void refreshed.push(siteId),
    });
    return { access, sessionsFor, refreshed };
  }

  it('opens a session with the credentials the directory gives, and hands over the site', async () => {
    const { access, sessionsFor } = setup();
    const site = await access.read('site_a', async ({ site, connector }) => ({ site, hasConnector: !!connector }));
    expect(site).toEqual({ site: { id: 'site_a', url: 'https://a.example' }, hasConnector: true });
    expect(sessionsFor).toEqual([
      { restUrl: 'https://a.example/wp-json/', username: 'admin', applicationPassword: 'secret' },
    ]);
  });

  it("throws the directory's own problem for a site it cannot reach, before any work runs", async () => {
    const { access, refreshed } = setup();
    let ran = false;
    const thrown: unknown = await access
      .operate('site_b', async () => {
        ran = true;
      })
      .catch((error: unknown) => error);
    expect(isProblem(thrown, notConnected)).toBe(true);
    expect(ran).toBe(false);
    expect(refreshed).toEqual([]);
  });

  it('runs operations on one site one at a time, and refreshes after each, failed or not', async () => {
    const { access, refreshed } = setup();
    const order: string[] = [];
    let release!: () => void;
    const first = access.operate('site_a', async () => {
      order.push('first started');
      await new Promise<void>((resolve) => (release = resolve));
      order.push('first done');
      throw new Error('the site refused');
    });
    const second = access.operate('site_a', async () => void order.push('second started'));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(order).toEqual(['first started']);
    release();
    await expect(first).rejects.toThrow('the site refused');
    await second;
    expect(order).toEqual(['first started', 'first done', 'second started']);
    expect(refreshed).toEqual(['site_a', 'site_a']);
  });
});
