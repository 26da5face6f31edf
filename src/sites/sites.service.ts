import type { SiteScope } from '../shared/actor.js';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { SiteTaskQueue } from '../jobs/site-task-queue.js';
import type { SiteLifecycle } from './site-lifecycle.js';
import type { Clock } from '../shared/clock.js';
import { isProblem } from '../shared/errors.js';
import { createId } from '../shared/ids.js';
import type { SecretBox } from '../shared/secret-box.js';
import { discoverSite, normaliseSiteUrl, type DiscoveredSite } from '../wordpress/discovery.js';
import type { SiteHttp } from '../wordpress/site-http.js';
import type { WordPressClient } from '../wordpress/wordpress-client.js';
import { wordpressProblems } from '../wordpress/wordpress.errors.js';
import { sitesProblems } from './sites.errors.js';
import type { SitesRepository } from './sites.repository.js';
import { siteCredentials } from './site-directory.js';
import type { SiteRow, SiteState } from './sites.table.js';
import type { SiteListFilter } from './sites.schemas.js';
import type { Events } from '../shared/event-bus.js';

/** What Sitewarden does on a site needs these; an administrator on a single site has them all. */
const REQUIRED_CAPABILITIES = [
  'activate_plugins',
  'install_plugins',
  'update_plugins',
  'delete_plugins',
  'switch_themes',
  'update_themes',
  'delete_themes',
] as const;

const APP_NAME = 'Sitewarden';
export const AUTHORIZATION_CALLBACK_PATH = '/api/authorization/callback';

const hashState = (state: string) => createHash('sha256').update(state).digest('hex');
const STALE_STATES: SiteState[] = ['authorization_rejected', 'authorization_expired', 'authorization_failed'];

export interface SitesServiceDeps {
  repository: SitesRepository;
  http: SiteHttp;
  wordpress: WordPressClient;
  secrets: SecretBox;
  /** Reads a newly connected site's inventory (the inventory feature's sync, wired in services.ts). */
  sync: { syncNow(siteId: string): Promise<SiteRow | undefined> };
  queue: SiteTaskQueue;
  lifecycle: SiteLifecycle;
  clock: Clock;
  events: Events;
  publicUrl: string;
  authorizationTtlMinutes: number;
}

export function createSitesService(deps: SitesServiceDeps) {
  const { repository, http, wordpress, secrets, sync, clock, events } = deps;

  function parseUrl(input: string): string {
    let url: URL;
    try {
      url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(input.trim()) ? input.trim() : `https://${input.trim()}`);
    } catch {
      throw sitesProblems.invalidUrl.create(`"${input}" is not a URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw sitesProblems.invalidUrl.create(
        `only http and https sites can be connected, not ${url.protocol.replace(':', '')}`,
      );
    if (url.username || url.password)
      throw sitesProblems.invalidUrl.create(
        'the URL must not contain credentials; pass username and applicationPassword instead',
      );
    if (!url.hostname) throw sitesProblems.invalidUrl.create('the URL has no host');
    return normaliseSiteUrl(url.toString());
  }

  /** Refuses a URL that is connected or pending; forgets earlier failed attempts for it. */
  function claimUrl(url: string): void {
    const existing = repository.findByUrl(url);
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
    if (existing.state === 'pending' || STALE_STATES.includes(existing.state)) repository.delete(existing.id);
  }

  /** Checks the credentials against the site and returns what a connected row stores. */
  async function verifyCredentials(restUrl: string, username: string, applicationPassword: string) {
    const session = wordpress.session({ restUrl, username, applicationPassword });
    let user;
    try {
      user = await session.currentUser();
    } catch (error) {
      if (isProblem(error, wordpressProblems.credentialsRejected)) {
        throw wordpressProblems.credentialsRejected.create(
          `the site did not accept the application password for ${username}: ${error.detail}`,
          error.extensions,
        );
      }
      throw error;
    }
    const missing = REQUIRED_CAPABILITIES.filter((capability) => !user.capabilities[capability]);
    if (missing.length > 0) {
      throw wordpressProblems.insufficientCapabilities.create(
        `${user.username} lacks ${missing.join(', ')}; connect as an administrator`,
        { missingCapabilities: missing, roles: user.roles },
      );
    }
    const uuid = await session.currentApplicationPasswordUuid();
    return {
      username: user.username,
      credentialSealed: secrets.seal(applicationPassword),
      applicationPasswordUuid: uuid,
    };
  }

  async function discover(url: string): Promise<DiscoveredSite> {
    const discovered = await discoverSite(http, url);
    if (!discovered.authorizationEndpoint) {
      throw wordpressProblems.applicationPasswordsUnavailable.create(
        `${discovered.homeUrl} does not offer application passwords (WordPress 5.6+ needs HTTPS, or WP_ENVIRONMENT_TYPE=local, and no plugin disabling them)`,
      );
    }
    return discovered;
  }

  async function connectWithCredentials(url: string, username: string, applicationPassword: string): Promise<SiteRow> {
    const discovered = await discover(url);
    claimUrl(discovered.homeUrl);
    const verified = await verifyCredentials(discovered.restUrl, username, applicationPassword);
    const now = clock.now();
    const row = insertUnique({
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
    events.emit('site.connected', {
      siteId: row.id,
      url: row.url,
      username: verified.username,
      mode: 'credentials',
    });
    deps.lifecycle.connected(row.id);
    return (await sync.syncNow(row.id)) ?? row;
  }

  async function startAuthorization(url: string): Promise<{ site: SiteRow; authorizeUrl: string }> {
    const discovered = await discover(url);
    claimUrl(discovered.homeUrl);
    const now = clock.now();
    const state = randomBytes(24).toString('base64url');
    const appId = randomUUID();
    const callback = `${deps.publicUrl}${AUTHORIZATION_CALLBACK_PATH}?state=${state}`;
    const authorizeUrl = new URL(discovered.authorizationEndpoint!);
    authorizeUrl.searchParams.set('app_name', APP_NAME);
    authorizeUrl.searchParams.set('app_id', appId);
    authorizeUrl.searchParams.set('success_url', callback);
    authorizeUrl.searchParams.set('reject_url', `${callback}&success=false`);
    const site = insertUnique({
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

  function insertUnique(row: Parameters<SitesRepository['insert']>[0]): SiteRow {
    try {
      return repository.insert(row);
    } catch (error) {
      // Two requests for the same URL at once: the database's unique index decides.
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE')
        throw sitesProblems.alreadyConnected.create(`${row.url} was connected by another request just now`);
      throw error;
    }
  }

  function markFailed(site: SiteRow, state: SiteState, reason: string): void {
    const now = clock.now();
    repository.update(site.id, { state, stateReason: reason, authorizationStateHash: null, updatedAt: now });
  }

  async function removeSite(id: string): Promise<void> {
    const site = repository.findById(id);
    if (!site) return;
    let credentialRevoked = false;
    if (site.state === 'connected' && site.applicationPasswordUuid) {
      try {
        await wordpress.session(siteCredentials(site, secrets)).revokeApplicationPassword(site.applicationPasswordUuid);
        credentialRevoked = true;
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        events.emit('site.credential_revoke_failed', { siteId: site.id, url: site.url, reason });
      }
    }
    repository.delete(site.id);
    deps.lifecycle.removed(site.id);
    events.emit('site.disconnected', { siteId: site.id, url: site.url, credentialRevoked });
  }

  function checkVisible(id: string, scope: SiteScope): void {
    if (scope.kind === 'all') return;
    if (!repository.isVisible(id, scope)) throw sitesProblems.notFound.create(`no site has the id ${id}`);
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
        if (input.tags) repository.setTags(site.id, input.tags);
        return { mode: 'credentials' as const, site };
      }
      const pending = await startAuthorization(url);
      if (input.tags) repository.setTags(pending.site.id, input.tags);
      return { mode: 'authorization' as const, ...pending };
    },

    /** Replaces the site's tags; `tags` come validated and normalised by TagList. */
    setTags(id: string, tags: string[]): string[] {
      if (!repository.findById(id)) throw sitesProblems.notFound.create(`no site has the id ${id}`);
      repository.setTags(id, tags);
      return repository.tagsOf([id]).get(id) ?? [];
    },
    tagsOf: (ids: readonly string[]) => repository.tagsOf(ids),
    /** Tags in use on the sites `scope` includes (absent: every site), with their counts. */
    tagCounts: (scope?: SiteScope) => repository.tagCounts(scope),
    /**
     * A request's site: `site-not-found` when no site has the id or `scope` excludes it, the same
     * answer for both, so a scoped principal cannot tell another client's site exists.
     */
    checkVisible,
    /** checkVisible for a request's access (http/permissions.ts's SiteScopeCheck). */
    checkVisibleTo: (id: string, access: { sites: SiteScope }): void => checkVisible(id, access.sites),

    /** WordPress redirects the admin's browser here after approval (or rejection). */
    async completeAuthorization(query: {
      state: string;
      success?: string;
      site_url?: string;
      user_login?: string;
      password?: string;
    }): Promise<SiteRow> {
      const site = repository.findByAuthorizationState(hashState(query.state));
      if (!site || site.state !== 'pending')
        throw sitesProblems.authorizationUnknown.create(
          'this approval link is unknown or was already used; start the connection again',
        );
      if (site.authorizationExpiresAt && site.authorizationExpiresAt <= clock.now()) {
        markFailed(site, 'authorization_expired', 'the approval came after the authorization expired');
        events.emit('site.authorization_expired', { siteId: site.id, url: site.url });
        throw sitesProblems.authorizationExpired.create(
          `the authorization for ${site.url} expired; start the connection again`,
          { siteId: site.id },
        );
      }
      if (query.success === 'false' || !query.user_login || !query.password) {
        markFailed(site, 'authorization_rejected', 'the site’s admin did not approve the connection');
        events.emit('site.authorization_rejected', { siteId: site.id, url: site.url });
        throw sitesProblems.authorizationRejected.create(`the connection to ${site.url} was not approved`, {
          siteId: site.id,
        });
      }
      if (!query.site_url || normaliseSiteUrl(query.site_url) !== site.url) {
        const reason = `the approval names ${query.site_url ?? 'no site'}, not ${site.url}`;
        markFailed(site, 'authorization_failed', reason);
        events.emit('site.authorization_failed', { siteId: site.id, url: site.url, reason });
        throw sitesProblems.authorizationMismatch.create(reason, { siteId: site.id });
      }
      let verified;
      try {
        verified = await verifyCredentials(site.restUrl, query.user_login, query.password);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        markFailed(site, 'authorization_failed', reason);
        events.emit('site.authorization_failed', { siteId: site.id, url: site.url, reason });
        throw error;
      }
      const now = clock.now();
      const connected = repository.update(site.id, {
        state: 'connected',
        stateReason: null,
        ...verified,
        authorizationStateHash: null,
        authorizationUrl: null,
        connectedAt: now,
        updatedAt: now,
      })!;
      events.emit('site.connected', {
        siteId: site.id,
        url: site.url,
        username: verified.username,
        mode: 'authorization',
      });
      deps.lifecycle.connected(site.id);
      return (await sync.syncNow(site.id)) ?? connected;
    },

    list: (options: {
      limit: number;
      after?: string;
      state?: SiteState;
      filter?: Partial<SiteListFilter>;
      /** Only the sites a request may see. */
      scope?: SiteScope;
    }) =>
      repository.list({
        limit: options.limit + 1,
        after: options.after,
        states: options.state ? [options.state] : undefined,
        filter: options.filter,
        scope: options.scope,
      }),

    /** The site, or undefined when no site has the id (a page that shows ids it was given, say). */
    find: (id: string): SiteRow | undefined => repository.findById(id),

    get(id: string): SiteRow {
      const site = repository.findById(id);
      if (!site) throw sitesProblems.notFound.create(`no site has the id ${id}`);
      return site;
    },

    /** Removes the site; revoking its application password on the site is best effort. */
    async disconnect(id: string): Promise<void> {
      if (!repository.findById(id)) throw sitesProblems.notFound.create(`no site has the id ${id}`);
      // Queued behind any running sync or operation on the site, so none writes after removal.
      await deps.queue.run(id, () => removeSite(id));
    },

    /** Scheduler tick: pending authorizations past their time become `authorization_expired`. */
    expireAuthorizations(): number {
      const expired = repository.expiredAuthorizations(clock.now());
      for (const site of expired) {
        markFailed(site, 'authorization_expired', 'the site’s admin did not approve the connection in time');
        events.emit('site.authorization_expired', { siteId: site.id, url: site.url });
      }
      return expired.length;
    },
  };
}

export type SitesService = ReturnType<typeof createSitesService>;
