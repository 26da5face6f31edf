import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { isUniqueViolation } from '../db/dialect.js';
import type { Clock } from '../shared/clock.js';
import type { Events } from '../shared/event-bus.js';
import { createId } from '../shared/ids.js';
import { normaliseSiteUrl } from '../wordpress/discovery.js';
import type { SiteChecks } from './site-checks.js';
import type { SiteLifecycle } from './site-lifecycle.js';
import { sitesProblems } from './sites.errors.js';
import type { SitesRepository } from './sites.repository.js';
import type { SiteRow, SiteState } from './sites.table.js';

/**
 * Connecting a site, both ways: with a username and application password given (checked against
 * the site, connected at once), or through WordPress's authorization screen (a pending row with a
 * hashed one-time state, completed, rejected or expired when the admin's browser comes back or the
 * scheduler finds it past its time). A URL already connected or waiting is refused; a connected
 * site is announced (event, lifecycle) and its inventory read at once.
 */

const APP_NAME = 'Sitewarden';
export const AUTHORIZATION_CALLBACK_PATH = '/api/authorization/callback';

const hashState = (state: string) => createHash('sha256').update(state).digest('hex');
const STALE_STATES: SiteState[] = ['authorization_rejected', 'authorization_expired', 'authorization_failed'];

export function createSiteConnection(deps: {
  repository: SitesRepository;
  checks: SiteChecks;
  /** Reads a newly connected site's inventory (the inventory feature's sync, wired in services.ts). */
  sync: { syncNow(siteId: string): Promise<SiteRow | undefined> };
  lifecycle: SiteLifecycle;
  clock: Clock;
  events: Events;
  publicUrl: string;
  authorizationTtlMinutes: number;
}) {
  const { repository, sync, clock, events } = deps;
  const { parseUrl, verifyCredentials, discover } = deps.checks;

  /** A site just connected: announced (event, lifecycle), then its inventory read at once. */
  async function announce(row: SiteRow, username: string, mode: 'credentials' | 'authorization'): Promise<SiteRow> {
    events.emit('site.connected', { siteId: row.id, url: row.url, username, mode });
    deps.lifecycle.connected(row);
    return (await sync.syncNow(row.id)) ?? row;
  }

  /** Refuses a URL that is connected or pending; forgets earlier failed attempts for it. */
  async function claimUrl(url: string): Promise<void> {
    const existing = await repository.findByUrl(url);
    if (!existing) return;
    if (existing.state === 'connected')
      throw sitesProblems.alreadyConnected.create(`${url} is already connected as ${existing.id}`, {
        siteId: existing.id,
      });
    if (
      existing.state === 'pending' &&
      existing.authorizationExpiresAt &&
      existing.authorizationExpiresAt > clock.now()
    ) {
      throw sitesProblems.connectionPending.create(
        `${url} is waiting for approval as ${existing.id}; approve it, or delete that site to start again`,
        { siteId: existing.id },
      );
    }
    if (existing.state === 'pending' || STALE_STATES.includes(existing.state)) await repository.delete(existing.id);
  }

  async function connectWithCredentials(url: string, username: string, applicationPassword: string): Promise<SiteRow> {
    const discovered = await discover(url);
    await claimUrl(discovered.homeUrl);
    const verified = await verifyCredentials(discovered.restUrl, username, applicationPassword);
    const now = clock.now();
    const row = await insertUnique({
      id: createId('site', now),
      url: discovered.homeUrl,
      restUrl: discovered.restUrl,
      name: discovered.name,
      state: 'connected',
      ...verified,
      connectedAt: now,
      createdAt: now,
      updatedAt: now,
    });
    return announce(row, verified.username, 'credentials');
  }

  async function startAuthorization(url: string): Promise<{ site: SiteRow; authorizeUrl: string }> {
    const discovered = await discover(url);
    await claimUrl(discovered.homeUrl);
    const now = clock.now();
    const state = randomBytes(24).toString('base64url');
    const appId = randomUUID();
    const callback = `${deps.publicUrl}${AUTHORIZATION_CALLBACK_PATH}?state=${state}`;
    const authorizeUrl = new URL(discovered.authorizationEndpoint!);
    authorizeUrl.searchParams.set('app_name', APP_NAME);
    authorizeUrl.searchParams.set('app_id', appId);
    authorizeUrl.searchParams.set('success_url', callback);
    authorizeUrl.searchParams.set('reject_url', `${callback}&success=false`);
    const site = await insertUnique({
      id: createId('site', now),
      url: discovered.homeUrl,
      restUrl: discovered.restUrl,
      name: discovered.name,
      state: 'pending',
      authorizationStateHash: hashState(state),
      authorizationAppId: appId,
      authorizationUrl: authorizeUrl.toString(),
      authorizationExpiresAt: new Date(now.getTime() + deps.authorizationTtlMinutes * 60_000),
      createdAt: now,
      updatedAt: now,
    });
    events.emit('site.connection_started', { siteId: site.id, url: site.url });
    return { site, authorizeUrl: authorizeUrl.toString() };
  }

  async function insertUnique(row: Parameters<SitesRepository['insert']>[0]): Promise<SiteRow> {
    try {
      return await repository.insert(row);
    } catch (error) {
      // Two requests for the same URL at once: the database's unique index decides.
      if (isUniqueViolation(error))
        throw sitesProblems.alreadyConnected.create(`${row.url} was connected by another request just now`);
      throw error;
    }
  }

  async function markFailed(site: SiteRow, state: SiteState, reason: string): Promise<void> {
    const now = clock.now();
    await repository.update(site.id, { state, stateReason: reason, authorizationStateHash: null, updatedAt: now });
  }

  return {
    async connect(input: { url: string; username?: string; applicationPassword?: string; tags?: string[] }) {
      const url = parseUrl(input.url);
      if ((input.username === undefined) !== (input.applicationPassword === undefined)) {
        throw sitesProblems.incompleteCredentials.create(
          `only ${input.username === undefined ? 'applicationPassword' : 'username'} was given`,
        );
      }
      if (input.username !== undefined && input.applicationPassword !== undefined) {
        const site = await connectWithCredentials(url, input.username, input.applicationPassword);
        if (input.tags) await repository.setTags(site.id, input.tags);
        return { mode: 'credentials' as const, site };
      }
      const pending = await startAuthorization(url);
      if (input.tags) await repository.setTags(pending.site.id, input.tags);
      return { mode: 'authorization' as const, ...pending };
    },

    /** WordPress redirects the admin's browser here after approval (or rejection). */
    async completeAuthorization(query: {
      state: string;
      success?: string;
      site_url?: string;
      user_login?: string;
      password?: string;
    }): Promise<SiteRow> {
      const site = await repository.findByAuthorizationState(hashState(query.state));
      if (!site || site.state !== 'pending')
        throw sitesProblems.authorizationUnknown.create(
          'this approval link is unknown or was already used; start the connection again',
        );
      if (site.authorizationExpiresAt && site.authorizationExpiresAt <= clock.now()) {
        await markFailed(site, 'authorization_expired', 'the approval came after the authorization expired');
        events.emit('site.authorization_expired', { siteId: site.id, url: site.url });
        throw sitesProblems.authorizationExpired.create(
          `the authorization for ${site.url} expired; start the connection again`,
          { siteId: site.id },
        );
      }
      if (query.success === 'false' || !query.user_login || !query.password) {
        await markFailed(site, 'authorization_rejected', 'the site’s admin did not approve the connection');
        events.emit('site.authorization_rejected', { siteId: site.id, url: site.url });
        throw sitesProblems.authorizationRejected.create(`the connection to ${site.url} was not approved`, {
          siteId: site.id,
        });
      }
      if (!query.site_url || normaliseSiteUrl(query.site_url) !== site.url) {
        const reason = `the approval names ${query.site_url ?? 'no site'}, not ${site.url}`;
        await markFailed(site, 'authorization_failed', reason);
        events.emit('site.authorization_failed', { siteId: site.id, url: site.url, reason });
        throw sitesProblems.authorizationMismatch.create(reason, { siteId: site.id });
      }
      let verified;
      try {
        verified = await verifyCredentials(site.restUrl, query.user_login, query.password);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        await markFailed(site, 'authorization_failed', reason);
        events.emit('site.authorization_failed', { siteId: site.id, url: site.url, reason });
        throw error;
      }
      const now = clock.now();
      const connected = (await repository.update(site.id, {
        state: 'connected',
        stateReason: null,
        ...verified,
        authorizationStateHash: null,
        authorizationUrl: null,
        connectedAt: now,
        updatedAt: now,
      }))!;
      return announce(connected, verified.username, 'authorization');
    },

    /** Scheduler tick: pending authorizations past their time become `authorization_expired`. */
    async expireAuthorizations(): Promise<number> {
      const expired = await repository.expiredAuthorizations(clock.now());
      for (const site of expired) {
        await markFailed(site, 'authorization_expired', 'the site’s admin did not approve the connection in time');
        events.emit('site.authorization_expired', { siteId: site.id, url: site.url });
      }
      return expired.length;
    },
  };
}
