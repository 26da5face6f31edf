import type { SiteTaskQueue } from '../jobs/site-task-queue.js';
import { createConnector, type Connector } from './connector-client.js';
import type { SiteCredentials, WordPressClient, WordPressSession } from './wordpress-client.js';

/** The site a feature works on, as the features need it in messages and events. */
interface AccessedSite {
  id: string;
  url: string;
  /** The connector version the last sync read: operations it covers skip reading the connector's info first. */
  connectorVersion?: string | null;
}

/**
 * Where SiteAccess finds a connected site and its credentials. The sites feature implements it
 * (and throws its own problems for a site that does not exist or is not connected), so this base
 * module knows no feature.
 */
export interface SiteDirectory {
  connected(siteId: string): Promise<{ site: AccessedSite; credentials: SiteCredentials }>;
}

export interface ConnectedSite {
  site: AccessedSite;
  session: WordPressSession;
  connector: Connector;
}

/**
 * The one way to a site: an authenticated session with the site's timeouts, size caps and answer
 * validation (wordpress-client, site-http), and the connector behind its version gate. Features
 * name a site and work inside its queue; after a change, `afterOperation` (the inventory refresh)
 * runs so GET /api/sites/{id} shows the result.
 */
export function createSiteAccess({
  directory,
  wordpress,
  queue,
  operationTimeoutMs,
  afterOperation,
}: {
  directory: SiteDirectory;
  wordpress: WordPressClient;
  queue: SiteTaskQueue;
  operationTimeoutMs: number;
  afterOperation: (siteId: string) => Promise<unknown>;
}) {
  /** A session and connector with the given credentials, for a site the caller has already looked up. */
  function open(
    credentials: SiteCredentials,
    knownConnectorVersion: string | null = null,
  ): Omit<ConnectedSite, 'site'> {
    const session = wordpress.session(credentials);
    return {
      session,
      connector: createConnector(session, { operationTimeoutMs, knownVersion: knownConnectorVersion }),
    };
  }

  async function connected(siteId: string): Promise<ConnectedSite> {
    const { site, credentials } = await directory.connected(siteId);
    return { site, ...open(credentials, site.connectorVersion ?? null) };
  }

  return {
    open,
    connected,
    /** Reads from the site without queueing behind operations. */
    async read<T>(siteId: string, work: (access: ConnectedSite) => Promise<T>): Promise<T> {
      return work(await connected(siteId));
    },
    /**
     * Changes the site: one operation per site at a time, then the stored inventory is refreshed
     * (by `options.refresh` in place of the full refresh, for a caller that knows what changed).
     */
    async operate<T>(
      siteId: string,
      work: (access: ConnectedSite) => Promise<T>,
      options: { refresh?: () => Promise<unknown> } = {},
    ): Promise<T> {
      const access = await connected(siteId);
      return queue.run(siteId, async () => {
        try {
          return await work(access);
        } finally {
          await (options.refresh ? options.refresh() : afterOperation(siteId));
        }
      });
    },
  };
}

export type SiteAccess = ReturnType<typeof createSiteAccess>;
