import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { sqliteStateOf } from '../../src/db/state-db.js';
import { openDatabase } from '../../src/db/database.js';
import { defaultConnectorZipPath } from '../../src/connector/connector-package.js';
import { createApp, type AppDeps } from '../../src/app.js';
import type { Metrics } from '../../src/metrics/metrics.js';
import { createServices, type ServiceConfig } from '../../src/services.js';
import { testServiceConfig } from './service-config.js';
import { createFakeClock, systemClock, type Clock } from '../../src/shared/clock.js';
import { createCapturedLogger } from './log-capture.js';
import { createLoggedEvents } from '../../src/shared/logger.js';
import { createId } from '../../src/shared/ids.js';
import { sites, siteTags, type NewSiteRow, type SiteRow } from '../../src/sites/sites.table.js';
import type { NetworkPolicy } from '../../src/shared/network-policy.js';
import { mintToken } from '../../src/tokens/tokens.service.js';
import { apiTokens } from '../../src/tokens/tokens.table.js';

export { testServiceConfig };

/**
 * The whole application on a private in-memory database, with real services and a write and
 * a read token. Requests go through `app.request()`, exactly as the server would route them.
 */
export function createTestApp(
  options: {
    clock?: Clock;
    config?: Partial<ServiceConfig>;
    connectorZipPath?: string;
    auditWorkerPath?: string;
    metrics?: Metrics;
    /** Instead of the one `config.allowedNetworks` makes (loopback allowed): e.g. a policy with a stub resolver. */
    network?: NetworkPolicy;
    app?: Pick<AppDeps, 'readiness' | 'authLimiter' | 'metricsOnOwnListener' | 'trustedProxies' | 'overload'>;
    /** A database file instead of a private in-memory database (for a second connection, as another process would open). */
    databasePath?: string;
    /** The secret key, which the processes of one cluster share; a random one by default. */
    secretKey?: Buffer;
  } = {},
) {
  const clock = options.clock ?? systemClock;
  const database = openDatabase(options.databasePath ?? ':memory:');
  const logs = createCapturedLogger();
  // One bus per app, the captured logger subscribed, as main.ts composes it.
  const events = createLoggedEvents(logs.logger);
  const secretKey = options.secretKey ?? randomBytes(32);
  const state = sqliteStateOf(database);
  const services = createServices({
    config: { ...testServiceConfig, ...options.config },
    state,
    logger: logs.logger,
    events,
    clock,
    secretKey,
    auditWorkerPath: options.auditWorkerPath,
    metrics: options.metrics,
    network: options.network,
  });
  const app = createApp({
    ...services,
    connectorZipPath: options.connectorZipPath ?? defaultConnectorZipPath(),
    logger: logs.logger,
    version: 'test',
    checkDatabase: () => true,
    metrics: options.metrics,
    ...options.app,
  });
  // Operator tokens (no user): writeToken is an owner's, readToken a viewer's. Written straight into the
  // database, as the tokens service would store them (its `create` is async, and createTestApp is not).
  const operatorToken = (name: string, role: 'owner' | 'viewer') => {
    const { token, tokenHash, prefix } = mintToken();
    const now = clock.now();
    database.db
      .insert(apiTokens)
      .values({
        id: createId('tok', now),
        name,
        role,
        scope: role === 'owner' ? 'write' : 'read',
        tokenHash,
        prefix,
        createdAt: now,
      })
      .run();
    return token;
  };
  const writeToken = operatorToken('test-write', 'owner');
  const readToken = operatorToken('test-read', 'viewer');

  async function call(
    method: string,
    path: string,
    init: {
      json?: unknown;
      form?: Record<string, string>;
      token?: string | null;
      headers?: Record<string, string>;
    } = {},
  ) {
    const headers: Record<string, string> = { ...init.headers };
    const token = init.token === undefined ? writeToken : init.token;
    if (token) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (init.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.json);
    } else if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    const response = await app.request(path, { method, headers, body });
    const text = await response.text();
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON answers
    let json: any = undefined;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON
    }
    return { status: response.status, headers: response.headers, text, json };
  }

  return {
    app,
    services,
    database,
    /** The state database the services were given (single sign-on takes the same one, as main.ts does). */
    state,
    logs,
    clock,
    writeToken,
    readToken,
    call,
    close: async () => {
      await services.webhookDispatcher.stop();
      await services.http.close();
      database.close();
    },
  };
}

export { createFakeClock };
export type TestApp = ReturnType<typeof createTestApp>;

let nextLoopbackPort = 1;

/**
 * A connected site written straight into the app's database (no WordPress behind it): by default
 * at a loopback port nothing listens on, so anything that calls it fails fast.
 */
export function insertConnectedSite(
  t: Pick<TestApp, 'clock' | 'services' | 'database'>,
  fields: Partial<Omit<NewSiteRow, 'id'>> & { tags?: string[] } = {},
): string {
  const { tags, ...columns } = fields;
  const now = t.clock.now();
  const id = createId('site', now);
  const url = columns.url ?? `http://127.0.0.1:${nextLoopbackPort++}`;
  insertSiteRow(t, {
    url,
    restUrl: `${url}/wp-json/`,
    state: 'connected',
    username: 'admin',
    credentialSealed: t.services.secrets.seal('xxxx xxxx xxxx xxxx xxxx xxxx'),
    createdAt: now,
    updatedAt: now,
    connectedAt: now,
    ...columns,
    id,
  });
  if (tags) setSiteTags(t, id, tags);
  return id;
}

/**
 * A site's row written straight into the test app's SQLite database, at once: set-up that a test reads
 * back synchronously (the app's own sites repository is async, issue 34).
 */
export function insertSiteRow(t: Pick<TestApp, 'database'>, row: NewSiteRow): SiteRow {
  return t.database.db.insert(sites).values(row).returning().get();
}

/** A site's tags replaced straight in the test app's SQLite database, at once (as insertSiteRow). */
export function setSiteTags(t: Pick<TestApp, 'database'>, siteId: string, tags: readonly string[]): void {
  t.database.db.transaction((tx) => {
    tx.delete(siteTags).where(eq(siteTags.siteId, siteId)).run();
    if (tags.length > 0)
      tx.insert(siteTags)
        .values(tags.map((tag) => ({ siteId, tag })))
        .run();
  });
}
