import type { Readable } from 'node:stream';
import { z } from 'zod';
import { defineProblem, isAppError } from '../shared/errors.js';
import { siteHttpProblems } from './site-http.js';
import {
  BUNDLE_FRAMING_BYTES,
  DeletionsPlanned,
  FilesPage,
  InsertedAnswer,
  parseBundle,
  RestoreAborted,
  RestoreBegun,
  RestoreFinished,
  RowsAnswer,
  TablesAnswer,
  TableStaged,
  type FinishedRestore,
  type RowsCursor,
  type SiteFileEntry,
} from './connector-backup-schemas.js';
import {
  AvailableUpdatesSchema,
  ConnectorInfoSchema,
  PluginUpdatedSchema,
  ThemeActivatedSchema,
  ThemeDeletedSchema,
  ThemeUpdatedSchema,
  type AvailableUpdates,
  type ConnectorInfo,
} from './site-schemas.js';
import type { WordPressSession } from './wordpress-client.js';
import {
  CoreUpdatedSchema,
  ExpectedPluginUpdateSchema,
  ExpectedThemeUpdateSchema,
  PluginStatusAnswerSchema,
  TranslationsUpdatedSchema,
  type CoreUpdated,
  type ExpectedPluginUpdate,
  type ExpectedThemeUpdate,
  type PluginStatusAnswer,
  type TranslationsUpdated,
} from './connector-operation-schemas.js';

/**
 * The Sitewarden connector (connector/) adds what WordPress core's REST API cannot do:
 * updates, theme activation and deletion, update availability and versions, backups and restores.
 * Every call to it goes through this client, behind the version gate.
 */
const CONNECTOR_NAMESPACE = 'sitewarden/v1';
export const CONNECTOR_DOWNLOAD_PATH = '/api/connector.zip';
/** Where to get the connector, for people (the dashboard's link, behind its sign-in) and programs (the API's, behind a token). */
export const CONNECTOR_DOWNLOAD_HINT = `the dashboard's /connector.zip (or GET ${CONNECTOR_DOWNLOAD_PATH} with an API token)`;

/**
 * The connector release that added each feature: a site whose connector is older is refused
 * that feature only (an old connector still updates plugins). Keep in step with
 * connector/includes/class-sitewarden-connector-info.php.
 */
const CONNECTOR_FEATURES = {
  updates: '1.0.0',
  'plugins/update': '1.0.0',
  themes: '1.0.0',
  // 1.2.0: every table whatever its name, schemas parsed by the daemon, restores built from data.
  backups: '1.2.0',
  restore: '1.2.0',
  // 1.5.0: plugin and theme updates that name the version expected, answering a refusal or the offer left.
  'updates/expected-version': '1.5.0',
  // 1.6.0: a single-use link that signs the application password's user in to wp-admin.
  'admin-login': '1.6.0',
  // 1.8.0: a theme installed by slug from the theme directory (WordPress's REST API installs plugins only).
  'themes/install': '1.8.0',
} as const;
export type ConnectorFeature = keyof typeof CONNECTOR_FEATURES;

/** Whether a connector of `version` (as the last sync stored it; null: none) has `feature`, without asking the site. */
export const connectorVersionHas = (version: string | null, feature: ConnectorFeature): boolean =>
  version !== null && compareVersions(version, CONNECTOR_FEATURES[feature]) >= 0;

const connectorProblems = {
  missing: defineProblem('connector-missing', 422, 'The Sitewarden connector is not installed on the site'),
  outdated: defineProblem('connector-outdated', 422, 'The Sitewarden connector on the site is too old'),
};

const installHint = `download it from ${CONNECTOR_DOWNLOAD_HINT} and upload it in wp-admin under Plugins → Add New → Upload Plugin, then activate it`;

export type { AvailableUpdates, ConnectorInfo } from './site-schemas.js';
export type { FinishedRestore, RowsCursor, SiteFileEntry, SiteTable } from './connector-backup-schemas.js';

/** The longest sign-in link accepted from a site: wp-login.php's address and a 64-digit token fit many times over. */
const ADMIN_LOGIN_URL_MAX = 2048;

/**
 * A theme the connector installed (1.8.0+): its folder (the stylesheet, checked as a name that
 * cannot climb out of the themes folder), its name and version, and whether it is active.
 */
const ThemeInstalledSchema = z.object({
  stylesheet: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[A-Za-z0-9._-]+$/)
    .refine((name) => name !== '.' && name !== '..', 'expected a theme folder name'),
  name: z.string().max(500),
  version: z.string().max(200),
  active: z.boolean(),
});
export type ThemeInstalled = z.infer<typeof ThemeInstalledSchema>;

/** A site's one-click sign-in link, as the connector answers it (checked again against the site's origin). */
const AdminLoginLinkSchema = z.object({
  url: z.string().max(ADMIN_LOGIN_URL_MAX).url(),
  expiresAt: z.iso.datetime({ offset: true }),
});
export type AdminLoginLink = z.infer<typeof AdminLoginLinkSchema>;

/**
 * A remote site is untrusted: the link it answers must be an http(s) address of its own origin
 * (`siteUrl`), with no user name or password in it, or the answer is site-invalid-response.
 */
function checkAdminLoginLink(link: AdminLoginLink, siteUrl: string): AdminLoginLink {
  const url = new URL(link.url);
  const fits =
    (url.protocol === 'https:' || url.protocol === 'http:') &&
    url.origin === new URL(siteUrl).origin &&
    url.username === '' &&
    url.password === '';
  if (!fits)
    throw siteHttpProblems.invalidResponse.create(
      `the site's sign-in link is not an http(s) address on the site's own origin (${new URL(siteUrl).origin})`,
      { route: `${CONNECTOR_NAMESPACE}/admin-login` },
    );
  return { url: url.href, expiresAt: new Date(link.expiresAt).toISOString() };
}

/** The connector's info, or null when it is not installed (or not active). */
async function readConnectorInfo(session: WordPressSession): Promise<ConnectorInfo | null> {
  try {
    return await session.call('GET', `${CONNECTOR_NAMESPACE}/info`, { schema: ConnectorInfoSchema });
  } catch (error) {
    if (isAppError(error) && error.extensions.siteCode === 'rest_no_route') return null;
    throw error;
  }
}

/** Throws connector-missing or connector-outdated (naming the feature and both versions) unless the connector has `feature`. */
function assertConnectorFeature(info: ConnectorInfo | null, feature: ConnectorFeature): void {
  if (!info)
    throw connectorProblems.missing.create(`this needs the Sitewarden connector plugin on the site: ${installHint}`);
  const required = CONNECTOR_FEATURES[feature];
  if (compareVersions(info.connector, required) < 0) {
    throw connectorProblems.outdated.create(
      `${feature} needs Sitewarden connector ${required} or newer and the site has ${info.connector}: ${updateHint}`,
      {
        feature,
        connectorVersion: info.connector,
        requiredVersion: required,
      },
    );
  }
}

const updateHint = `download the current one from ${CONNECTOR_DOWNLOAD_HINT} and upload it in wp-admin under Plugins → Add New → Upload Plugin (WordPress offers to replace the installed version)`;

/**
 * Reads the connector's info once per session (for `info()` and for checking each feature against it).
 * With the version the last sync stored (`knownVersion`), a feature that version has is let through
 * without reading the info first (one request less per operation); should the site answer that it
 * has no such route (the connector was removed or downgraded since), the info is read and the
 * feature checked, so the caller gets connector-missing or connector-outdated as before.
 */
function createConnectorGate(session: WordPressSession, knownVersion: string | null) {
  let info: Promise<ConnectorInfo | null> | undefined;
  const read = (): Promise<ConnectorInfo | null> => {
    if (!info) {
      const reading = readConnectorInfo(session);
      // A failed read is not remembered: the next call asks again.
      reading.catch(() => {
        if (info === reading) info = undefined;
      });
      info = reading;
    }
    return info;
  };
  const ensure = async (feature: ConnectorFeature) => assertConnectorFeature(await read(), feature);
  const trusted = (feature: ConnectorFeature) =>
    !info && knownVersion !== null && compareVersions(knownVersion, CONNECTOR_FEATURES[feature]) >= 0;
  /** Calls a connector route behind the gate for `feature`. */
  const gated = async <T>(feature: ConnectorFeature, call: () => Promise<T>): Promise<T> => {
    if (!trusted(feature)) {
      await ensure(feature);
      return call();
    }
    try {
      return await call();
    } catch (error) {
      if (isAppError(error) && error.extensions.siteCode === 'rest_no_route')
        assertConnectorFeature(await read(), feature);
      throw error;
    }
  };
  /** Whether the version the last sync stored has `feature` (no request; false when unknown). */
  const known = (feature: ConnectorFeature) =>
    knownVersion !== null && compareVersions(knownVersion, CONNECTOR_FEATURES[feature]) >= 0;
  return { read, ensure, gated, known };
}

export function createConnector(
  session: WordPressSession,
  { operationTimeoutMs, knownVersion = null }: { operationTimeoutMs: number; knownVersion?: string | null },
) {
  const { read: cachedInfo, ensure, gated, known } = createConnectorGate(session, knownVersion);

  const operation = <T>(feature: ConnectorFeature, route: string, json: unknown, schema: z.ZodType<T>): Promise<T> =>
    gated(feature, () =>
      session.call('POST', `${CONNECTOR_NAMESPACE}/${route}`, { json, timeoutMs: operationTimeoutMs, schema }),
    );

  const updates = (options: { refresh?: boolean } = {}): Promise<AvailableUpdates> =>
    gated('updates', () =>
      session.call('GET', `${CONNECTOR_NAMESPACE}/updates`, {
        query: { refresh: options.refresh ? 1 : undefined },
        timeoutMs: operationTimeoutMs,
        schema: AvailableUpdatesSchema,
      }),
    );

  /**
   * For routes newer than the last version bump: a connector that answers rest_no_route is
   * missing or predates the route, which the problem says.
   */
  const newerOperation = async <T>(feature: string, route: string, json: unknown, schema: z.ZodType<T>): Promise<T> => {
    try {
      return await session.call('POST', `${CONNECTOR_NAMESPACE}/${route}`, {
        json,
        timeoutMs: operationTimeoutMs,
        schema,
      });
    } catch (error) {
      if (!isAppError(error) || error.extensions.siteCode !== 'rest_no_route') throw error;
      const info = await readConnectorInfo(session);
      if (!info) assertConnectorFeature(null, 'updates');
      throw connectorProblems.outdated.create(
        `${feature} needs a newer Sitewarden connector than the site’s ${info!.connector}: ${updateHint}`,
        { feature, connectorVersion: info!.connector },
      );
    }
  };

  /**
   * Whether the connector checks the offer in the update request itself (`updates/expected-version`):
   * as the version the last sync stored says (no request), else as its info says (read once per session).
   */
  const checksOffers = async (): Promise<boolean> =>
    knownVersion !== null
      ? known('updates/expected-version')
      : connectorVersionHas((await cachedInfo())?.connector ?? null, 'updates/expected-version');

  /** The installed version of a plugin (its file) or theme (its stylesheet), from WordPress's list; null: not installed. */
  const installedVersion = async (kind: 'plugin' | 'theme', item: string): Promise<string | null> =>
    kind === 'plugin'
      ? ((await session.listPlugins()).find((plugin) => `${plugin.plugin}.php` === item)?.version ?? null)
      : ((await session.listThemes()).find((theme) => theme.stylesheet === item)?.version ?? null);

  /**
   * Updates a plugin (its file) or theme (its stylesheet) only when the site offers `expectedVersion`
   * (null: any version offered): refused (nothing changed) with what the site has and offers now, else
   * updated. Connector 1.5.0+ checks the offer in the update request itself; an older one cannot, so
   * its offers are read first and the item updated only when they match, answered the same way (a
   * refusal with nothing offered reads the installed version from WordPress's list).
   */
  function updateExpecting(kind: 'plugin', file: string, expectedVersion: string | null): Promise<ExpectedPluginUpdate>;
  function updateExpecting(
    kind: 'theme',
    stylesheet: string,
    expectedVersion: string | null,
  ): Promise<ExpectedThemeUpdate>;
  async function updateExpecting(
    kind: 'plugin' | 'theme',
    item: string,
    expectedVersion: string | null,
  ): Promise<ExpectedPluginUpdate | ExpectedThemeUpdate> {
    if (await checksOffers())
      return kind === 'plugin'
        ? operation(
            'updates/expected-version',
            'plugins/update',
            { plugin: item, expectedVersion: expectedVersion ?? '' },
            ExpectedPluginUpdateSchema,
          )
        : operation(
            'updates/expected-version',
            'themes/update',
            { stylesheet: item, expectedVersion: expectedVersion ?? '' },
            ExpectedThemeUpdateSchema,
          );
    const offers = (await updates())[kind === 'plugin' ? 'plugins' : 'themes'];
    const offer = Object.hasOwn(offers, item) ? offers[item] : undefined;
    if (offer && (expectedVersion === null || offer.newVersion === expectedVersion)) {
      // Only the fields checked: the rest of an answer the site wrote (an `offer`, `requires`) is not passed on.
      const answer = (updated: { previousVersion: string; version: string; active: boolean }) => ({
        result: 'updated' as const,
        previousVersion: updated.previousVersion,
        version: updated.version,
        active: updated.active,
      });
      if (kind === 'plugin') {
        const updated = await updatePlugin(item);
        return { ...answer(updated), plugin: updated.plugin };
      }
      const updated = await updateTheme(item);
      return { ...answer(updated), stylesheet: updated.stylesheet };
    }
    // As connector 1.5.0 refuses it (connector/includes/class-sitewarden-connector-updates.php).
    return {
      result: 'refused',
      code: 'sitewarden_offer_changed',
      message: offer
        ? `${item} is offered at ${offer.newVersion}, not ${expectedVersion}.`
        : `No update of ${item} is offered.`,
      version: offer ? offer.version : await installedVersion(kind, item),
      offer: offer ? { version: offer.version, newVersion: offer.newVersion } : null,
    };
  }

  const updatePlugin = (file: string) =>
    operation('plugins/update', 'plugins/update', { plugin: file }, PluginUpdatedSchema);
  const updateTheme = (stylesheet: string) => operation('themes', 'themes/update', { stylesheet }, ThemeUpdatedSchema);

  const backup = (path: string) => `${CONNECTOR_NAMESPACE}/${path}`;
  const timeoutMs = operationTimeoutMs;

  return {
    /** The connector's info, or null when it is not installed (or not active); read once per session, shared with the feature checks. */
    info: cachedInfo,
    /** The connector's info read afresh, for a health check: the session's cached read says nothing of the site now. */
    infoNow: () => readConnectorInfo(session),
    updates,
    /** Update offers when the connector is installed and answers; null otherwise (they are extra information). */
    updatesIfAvailable: () => updates().catch(() => null),
    updatePlugin,
    updateTheme,
    updateExpecting,
    /** Installs a theme by slug from the theme directory, and with `activate` switches to it (connector 1.8.0+). */
    installTheme: (slug: string, options: { activate?: boolean } = {}): Promise<ThemeInstalled> =>
      operation(
        'themes/install',
        'themes/install',
        { slug, activate: options.activate ?? false },
        ThemeInstalledSchema,
      ),
    activateTheme: (stylesheet: string) => operation('themes', 'themes/activate', { stylesheet }, ThemeActivatedSchema),
    deleteTheme: (stylesheet: string) => operation('themes', 'themes/delete', { stylesheet }, ThemeDeletedSchema),

    /**
     * Activates, deactivates or deletes a plugin under WordPress's plugin dependency rules, checked
     * on the site in the same request; null when the site's connector predates these routes.
     */
    async changePluginStatus(
      action: 'activate' | 'deactivate' | 'delete',
      file: string,
      options: { force?: boolean } = {},
    ): Promise<PluginStatusAnswer | null> {
      try {
        return await session.call('POST', `${CONNECTOR_NAMESPACE}/plugins/${action}`, {
          json: { plugin: file, force: options.force ?? false },
          timeoutMs,
          schema: PluginStatusAnswerSchema,
        });
      } catch (error) {
        if (isAppError(error) && error.extensions.siteCode === 'rest_no_route') return null;
        throw error;
      }
    },

    /** Updates WordPress core to `version` (one WordPress offers) or to the newest offered. */
    updateCore: (version?: string): Promise<CoreUpdated> =>
      newerOperation('core', 'core/update', { version: version ?? '' }, CoreUpdatedSchema),

    /** Installs every language pack WordPress's update checks offer (core, plugins, themes). */
    updateTranslations: (): Promise<TranslationsUpdated> =>
      newerOperation('translations', 'translations/update', {}, TranslationsUpdatedSchema),

    /**
     * A single-use link, valid for about a minute, that signs the application password's user in
     * to wp-admin (connector 1.6.0+). The link is a secret: it goes to the browser, never to a log.
     */
    adminLoginLink: async (siteUrl: string): Promise<AdminLoginLink> =>
      checkAdminLoginLink(
        await gated('admin-login', () =>
          session.call('POST', `${CONNECTOR_NAMESPACE}/admin-login`, { schema: AdminLoginLinkSchema }),
        ),
        siteUrl,
      ),

    /** Refuses (connector-outdated) a connector older than the backups (or restore) feature needs; call before the first step. */
    ensure: (feature: 'backups' | 'restore') => ensure(feature),

    /** A page of the site's files; `known` ([path, size, mtime, sha256]) spares hashing files whose size and mtime did not change. */
    files: (
      cursor: string,
      limit: number,
      known: [string, number, number, string][],
    ): Promise<{ files: SiteFileEntry[]; next: string | null }> =>
      session.call('POST', backup('backup/files'), { json: { cursor, limit, known }, timeoutMs, schema: FilesPage }),

    /** `length` bytes of a file from `offset`, streamed; a body longer than that fails with site-response-too-large before it is passed on. */
    fileRange: (path: string, offset: number, length: number): Promise<Readable> =>
      session.callStream(backup('backup/file'), { query: { path, offset, length }, timeoutMs, maxBytes: length }),

    /**
     * Many small files in one request, `expectedBytes` in all as listed (a longer body fails);
     * null for a file that is gone, or too large to bundle now. `onBytes` sees every byte received.
     * With `receiveInto`, the body is copied as it arrives into the buffer it gives for the most
     * the body may hold, and the files are views of that buffer (the caller may reuse it once it
     * is done with them): no chunk outlives its copy, and no new buffer is made per bundle.
     */
    async bundle(
      paths: string[],
      expectedBytes: number,
      onBytes: (bytes: number) => void = () => {},
      receiveInto?: (maxBytes: number) => Buffer,
    ): Promise<(Buffer | null)[]> {
      const maxBytes = expectedBytes + paths.length * BUNDLE_FRAMING_BYTES;
      const body = await session.callStream(backup('backup/bundle'), {
        method: 'POST',
        json: { paths },
        timeoutMs,
        maxBytes,
      });
      const into = receiveInto?.(maxBytes);
      if (into && into.length >= maxBytes) {
        let length = 0;
        for await (const chunk of body) {
          const bytes = chunk as Buffer;
          onBytes(bytes.length);
          // callStream fails a body past maxBytes before passing it on; checked again so a copy never runs past the buffer.
          if (length + bytes.length > into.length) throw new Error('the bundle body is longer than its limit');
          bytes.copy(into, length);
          length += bytes.length;
        }
        return parseBundle(into.subarray(0, length), paths.length);
      }
      const chunks: Buffer[] = [];
      for await (const chunk of body) {
        onBytes((chunk as Buffer).length);
        chunks.push(chunk as Buffer);
      }
      return parseBundle(Buffer.concat(chunks), paths.length);
    },

    tables: () => session.call('GET', backup('backup/tables'), { timeoutMs, schema: TablesAnswer }),
    /** At most `limit` rows in at most `bytes` bytes of SQL, unless one row alone is larger. */
    rows: (table: string, after: RowsCursor | null, limit: number, bytes: number) =>
      session.call('GET', backup('backup/rows'), {
        query: { table, after: after ? JSON.stringify(after) : undefined, limit, bytes },
        timeoutMs,
        schema: RowsAnswer,
      }),

    begin: () => session.call('POST', backup('restore/begin'), { timeoutMs, schema: RestoreBegun }),
    async writeFile(restore: string, path: string, offset: number, bytes: Buffer, mtime: number): Promise<void> {
      await session.callRaw('POST', backup('restore/file'), {
        query: { restore, path, offset, mtime },
        body: bytes,
        timeoutMs,
      });
    },
    planDeletions: (restore: string, paths: string[]) =>
      session.call('POST', backup('restore/delete'), { json: { restore, paths }, timeoutMs, schema: DeletionsPlanned }),
    /** The staged table is created from the schema as data: the connector writes the statement. */
    createTable: (restore: string, table: string, schema: object) =>
      session.call('POST', backup('restore/table'), {
        json: { restore, table, schema },
        timeoutMs,
        schema: TableStaged,
      }),
    insertRows: (restore: string, table: string, sql: string) =>
      session.call('POST', backup('restore/rows'), {
        json: { restore, table, sql },
        timeoutMs,
        schema: InsertedAnswer,
      }),
    /**
     * Swaps the staged tables in, drops the site's tables not in `tables` (the backup's complete
     * list), moves the files into place. Safe to call again after an interruption: the connector
     * keeps a journal and completes what the first call began.
     */
    finish: (restore: string, tables: string[]): Promise<FinishedRestore> =>
      session.call('POST', backup('restore/finish'), { json: { restore, tables }, timeoutMs, schema: RestoreFinished }),
    /** Discards what was staged; a finish already past its table swap is completed instead (`completed: true`). */
    abort: (restore: string) =>
      session.call('POST', backup('restore/abort'), { json: { restore }, timeoutMs, schema: RestoreAborted }),
  };
}

export type Connector = ReturnType<typeof createConnector>;
/** What a backup or restore uses of the connector. */
export type BackupConnector = Pick<
  Connector,
  | 'ensure'
  | 'files'
  | 'fileRange'
  | 'bundle'
  | 'tables'
  | 'rows'
  | 'begin'
  | 'writeFile'
  | 'planDeletions'
  | 'createTable'
  | 'insertRows'
  | 'finish'
  | 'abort'
>;

/** Compares dotted numeric versions (`1.10.0` > `1.9.2`); missing parts count as 0. */
export function compareVersions(a: string, b: string): number {
  const left = a.split('.').map((part) => parseInt(part, 10) || 0);
  const right = b.split('.').map((part) => parseInt(part, 10) || 0);
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    const difference = (left[i] ?? 0) - (right[i] ?? 0);
    if (difference !== 0) return Math.sign(difference);
  }
  return 0;
}
