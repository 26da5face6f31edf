import type { Readable } from 'node:stream';
import type { z } from 'zod';
import type { SiteHttp, SiteResponse } from './site-http.js';
import { siteHttpProblems } from './site-http.js';
import { restRouteUrl } from './rest-url.js';
import {
  ApplicationPasswordIntrospectionSchema,
  CurrentUserSchema,
  MAX_PLUGINS_PER_SITE,
  MAX_THEMES_PER_SITE,
  WordPressPluginListSchema,
  WordPressThemeListSchema,
  type WordPressPlugin,
  type WordPressTheme,
} from './site-schemas.js';
import { wordpressProblems, WordPressErrorBodySchema, type WordPressErrorBody } from './wordpress.errors.js';

export interface SiteCredentials {
  restUrl: string;
  username: string;
  applicationPassword: string;
}

interface WordPressUser {
  id: number;
  username: string;
  name: string;
  roles: string[];
  capabilities: Record<string, boolean>;
}

export type { WordPressPlugin, WordPressTheme } from './site-schemas.js';

/** Authenticated calls to one site's core REST API. */
export interface WordPressSession {
  currentUser(): Promise<WordPressUser>;
  currentApplicationPasswordUuid(): Promise<string | null>;
  listPlugins(): Promise<WordPressPlugin[]>;
  listThemes(): Promise<WordPressTheme[]>;
  revokeApplicationPassword(uuid: string): Promise<void>;
  /**
   * Raw access for feature modules (plugins, themes, the connector). With `schema` the answer is
   * checked against it (the site boundary): a wrong shape is `site-invalid-response` naming the route.
   */
  call<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', route: string, options?: CallOptions<T>): Promise<T>;
  /** Raw bytes both ways (backups): a 2xx answer's body as it is, anything else as the problem it means. */
  /** A GET whose 2xx body is streamed (large backup downloads); anything else is the problem it means. */
  callStream(
    route: string,
    options: {
      method?: 'GET' | 'POST';
      query?: Record<string, string | number | undefined>;
      json?: unknown;
      timeoutMs?: number;
      maxBytes: number;
    },
  ): Promise<Readable>;
  callRaw(
    method: 'GET' | 'POST',
    route: string,
    options?: {
      query?: Record<string, string | number | undefined>;
      json?: unknown;
      body?: Uint8Array;
      timeoutMs?: number;
      maxBytes?: number;
    },
  ): Promise<SiteResponse>;
}

interface CallOptions<T> {
  query?: Record<string, string | number | undefined>;
  json?: unknown;
  timeoutMs?: number;
  schema?: z.ZodType<T>;
}

export interface WordPressClient {
  session(credentials: SiteCredentials): WordPressSession;
}

export function createWordPressClient({ http }: { http: SiteHttp }): WordPressClient {
  return {
    session(credentials) {
      const call = async <T>(
        method: 'GET' | 'POST' | 'PUT' | 'DELETE',
        route: string,
        options: CallOptions<T> = {},
      ): Promise<T> => {
        const response = await http.request({
          method,
          url: restRouteUrl(credentials.restUrl, route, options.query),
          json: options.json,
          timeoutMs: options.timeoutMs,
          basicAuth: { username: credentials.username, password: credentials.applicationPassword },
        });
        const answer = readRestResponse(response);
        // Without a schema the caller asked for `unknown` (or an answer it ignores, a DELETE's) and checks it itself.
        return options.schema ? checkSiteAnswer(options.schema, answer, route) : (answer as T);
      };
      return {
        call,
        async callRaw(method, route, options = {}) {
          const response = await http.request({
            method,
            url: restRouteUrl(credentials.restUrl, route, options.query),
            json: options.json,
            body: options.body,
            timeoutMs: options.timeoutMs,
            maxBytes: options.maxBytes,
            basicAuth: { username: credentials.username, password: credentials.applicationPassword },
          });
          if (response.status < 200 || response.status >= 300) readRestResponse(response);
          return response;
        },
        async callStream(route, options) {
          const url = restRouteUrl(credentials.restUrl, route, options.query);
          const response = await http.stream({
            url,
            method: options.method,
            json: options.json,
            timeoutMs: options.timeoutMs,
            maxBytes: options.maxBytes,
            basicAuth: { username: credentials.username, password: credentials.applicationPassword },
          });
          if (response.status >= 200 && response.status < 300) return response.body;
          const chunks: Buffer[] = [];
          for await (const chunk of response.body) if (chunks.push(chunk as Buffer) > 64) break;
          const body = Buffer.concat(chunks);
          return restFailure({
            ...response,
            body,
            text: () => body.toString('utf8'),
            json: (): unknown => JSON.parse(body.toString('utf8')),
          });
        },
        async currentUser() {
          const user = await call('GET', 'wp/v2/users/me', { query: { context: 'edit' }, schema: CurrentUserSchema });
          return {
            id: user.id,
            username: user.username ?? user.slug,
            name: user.name,
            roles: user.roles ?? [],
            capabilities: Object.fromEntries(
              Object.entries(user.capabilities ?? {}).map(([name, granted]) => [
                name,
                granted === true || granted === 1,
              ]),
            ),
          };
        },
        async currentApplicationPasswordUuid() {
          const route = 'wp/v2/users/me/application-passwords/introspect';
          let answer: unknown;
          try {
            answer = await call('GET', route);
          } catch {
            return null; // Older WordPress has no introspection; disconnecting then cannot revoke.
          }
          return checkSiteAnswer(ApplicationPasswordIntrospectionSchema, answer, route).uuid;
        },
        listPlugins: async () =>
          checkInventory(
            await call<unknown>('GET', 'wp/v2/plugins', { query: { context: 'edit' } }),
            'wp/v2/plugins',
            'plugins',
            MAX_PLUGINS_PER_SITE,
            WordPressPluginListSchema,
          ),
        listThemes: async () =>
          checkInventory(
            await call<unknown>('GET', 'wp/v2/themes', { query: { context: 'edit', per_page: 100 } }),
            'wp/v2/themes',
            'themes',
            MAX_THEMES_PER_SITE,
            WordPressThemeListSchema,
          ),
        async revokeApplicationPassword(uuid) {
          await call('DELETE', `wp/v2/users/me/application-passwords/${encodeURIComponent(uuid)}`);
        },
      };
    },
  };
}

/** Turns a REST answer into data, or into the problem that explains it. */
function readRestResponse(response: SiteResponse): unknown {
  if (response.status >= 200 && response.status < 300) return response.json();
  return restFailure(response);
}

/** The problem that explains a REST answer that is not a success. */
function restFailure(response: SiteResponse): never {
  let error: WordPressErrorBody = {};
  try {
    // An error document of another shape is described by its status alone, as a non-JSON one is (a proxy, a PHP fatal).
    error = WordPressErrorBodySchema.safeParse(response.json()).data ?? {};
  } catch {
    // A non-JSON error page (a proxy, a PHP fatal) is described by its status alone.
  }
  const detail = `${error.message ? stripTags(error.message) : `the site answered HTTP ${response.status}`}${error.code ? ` (${error.code})` : ''}`;
  const extensions = { siteStatus: response.status, siteCode: error.code };
  if (response.status === 401) throw wordpressProblems.credentialsRejected.create(detail, extensions);
  if (response.status === 403) throw wordpressProblems.siteForbidden.create(detail, extensions);
  if (response.status === 404 && error.code === 'rest_no_route') {
    // Sites without pretty permalinks name the route in ?rest_route=, not in the path.
    const answered = new URL(response.url);
    throw siteHttpProblems.invalidResponse.create(
      `the site has no REST route for ${answered.searchParams.get('rest_route') ?? answered.pathname}`,
      extensions,
    );
  }
  throw wordpressProblems.siteError.create(detail, extensions);
}

/** The site's answer as `schema` describes it, or `site-invalid-response` naming the route and the first misfit. */
export function checkSiteAnswer<T>(schema: z.ZodType<T>, answer: unknown, route: string): T {
  const parsed = schema.safeParse(answer);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
  throw siteHttpProblems.invalidResponse.create(
    `the site's answer to ${route} does not have the expected shape${where}: ${issue?.message ?? 'invalid'}`,
    { route },
  );
}

/** A plugin or theme list, refused whole when longer than Sitewarden manages per site (before each entry is checked). */
function checkInventory<T>(
  answer: unknown,
  route: string,
  kind: 'plugins' | 'themes',
  cap: number,
  schema: z.ZodType<T[]>,
): T[] {
  if (Array.isArray(answer) && answer.length > cap) {
    throw wordpressProblems.inventoryTooLarge.create(
      `the site reports ${answer.length} ${kind} and Sitewarden manages at most ${cap} ${kind} per site`,
      { route, kind, reported: answer.length, limit: cap },
    );
  }
  return checkSiteAnswer(schema, answer, route);
}

/** A WordPress message as text: tags out, the paragraphs they separated kept apart by a space. */
const stripTags = (text: string) =>
  text
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
