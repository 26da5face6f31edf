import { z } from 'zod';
import { defineProblem, isAppError } from '../shared/errors.js';
import type { SiteHttp } from './site-http.js';
import type { WordPressSession } from './wordpress-client.js';

/**
 * Restore points for safe updates (the connector's rollback/… routes, inside WordPress) and the
 * standalone rollback path next to the connector (sitewarden-rollback.php, without WordPress),
 * which puts a saved folder back when every WordPress request ends in a fatal error.
 */
const STANDALONE_PATH = '/wp-content/plugins/sitewarden-connector/sitewarden-rollback.php';
const SECRET_HEADER = 'x-sitewarden-rollback-secret';
/** The standalone path answers a few hundred bytes; anything larger is not it. */
const STANDALONE_MAX_BYTES = 64 * 1024;
/**
 * The path allows a few requests a minute per site (429 with `Retry-After` past them, connector
 * RATE_LIMIT): a 429 is waited out, at most this long each time and this many times, then answered.
 */
const RATE_LIMITED_WAIT_MAX_MS = 60_000;
const RATE_LIMITED_RETRIES = 2;
/** A 429 without a usable `Retry-After`: the path's window is a minute. */
const RATE_LIMITED_DEFAULT_WAIT_MS = 60_000;

/** The wait a 429's `Retry-After` asks for (seconds, or an HTTP date), bounded. */
function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  let ms = RATE_LIMITED_DEFAULT_WAIT_MS;
  if (value && /^\d{1,6}$/.test(value)) ms = Number(value) * 1000;
  else if (value && !Number.isNaN(Date.parse(value))) ms = Date.parse(value) - now;
  return Math.min(Math.max(ms, 0), RATE_LIMITED_WAIT_MAX_MS);
}

export const rollbackProblems = {
  unavailable: defineProblem('rollback-path-unavailable', 422, 'The site’s standalone rollback path cannot be used'),
};

const RestorePointSchema = z.object({
  id: z.string().regex(/^[0-9]{14}-[0-9a-f]{8}$/),
  target: z.string().max(300),
  bytes: z.number().int().nonnegative(),
});

const StandaloneStatusSchema = z.object({
  saved: z.array(z.object({ id: z.string().max(40), target: z.string().max(300), restored: z.boolean() })).max(10_000),
});
const StandaloneRestoredSchema = z.object({ restored: z.string().max(300), already: z.boolean() });
const StandaloneErrorSchema = z.object({ code: z.string().max(100) });
/** A version header as the site read it: short, printable (it ends up in the inventory and the history). */
const StandaloneVersionSchema = z.object({
  version: z
    .string()
    .min(1)
    .max(64)
    .regex(/^\P{Cc}+$/u)
    .nullable(),
});

const updateHint =
  'the site’s connector predates safe updates: download the current one from GET /api/connector.zip and upload it in wp-admin (WordPress offers to replace the installed version)';

/** What the connector (inside WordPress) does for rollbacks. */
export function createRestorePoints(session: WordPressSession, { timeoutMs }: { timeoutMs: number }) {
  const post = async <T>(route: string, json: unknown, schema: z.ZodType<T>): Promise<T> => {
    try {
      return await session.call('POST', `sitewarden/v1/rollback/${route}`, { json, timeoutMs, schema });
    } catch (error) {
      if (isAppError(error) && error.extensions.siteCode === 'rest_no_route')
        throw rollbackProblems.unavailable.create(updateHint);
      if (isAppError(error) && error.extensions.siteCode === 'sitewarden_rollback_unavailable')
        throw rollbackProblems.unavailable.create(error.detail);
      throw error;
    }
  };
  return {
    /** Stores the SHA-256 of `secret` on the site; the secret itself never leaves the daemon except to authenticate. */
    provisionSecret: (secretHash: string) =>
      post('secret', { hash: secretHash }, z.object({ provisioned: z.literal(true) })),
    /** Copies the plugin's folder (or single file) or the theme's folder aside, before the update. */
    save: (type: 'plugin' | 'theme' | 'core', target: string) => post('save', { type, target }, RestorePointSchema),
    discard: (id: string) => post('discard', { id }, z.object({ discarded: z.boolean() })),
  };
}

export interface StandaloneAnswer {
  status: number;
  code?: string;
}

/**
 * The standalone rollback path of one site, authenticated with the site's rollback secret. A 429
 * (the path's rate limit) is retried after its `Retry-After` (bounded), not answered at once.
 */
export function createStandaloneRollback(
  http: SiteHttp,
  siteUrl: string,
  secret: string | null,
  {
    sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
  }: { sleep?: (ms: number) => Promise<void> } = {},
) {
  const url = `${siteUrl.replace(/\/+$/, '')}${STANDALONE_PATH}`;

  async function send(json: unknown): Promise<{ status: number; body: unknown }> {
    const post = () =>
      http.request({
        method: 'POST',
        url,
        json,
        headers: secret === null ? {} : { [SECRET_HEADER]: secret },
        timeoutMs: 30_000,
        maxBytes: STANDALONE_MAX_BYTES,
        followRedirects: false,
      });
    let response = await post();
    for (let retry = 1; response.status === 429 && retry <= RATE_LIMITED_RETRIES; retry++) {
      await sleep(retryAfterMs(response.headers['retry-after']));
      response = await post();
    }
    let body: unknown = null;
    try {
      body = JSON.parse(response.text());
    } catch {
      body = null;
    }
    return { status: response.status, body };
  }

  const failure = (answer: { status: number; body: unknown }): StandaloneAnswer => {
    const parsed = StandaloneErrorSchema.safeParse(answer.body);
    return { status: answer.status, code: parsed.success ? parsed.data.code : undefined };
  };

  return {
    url,
    /** 200 and the saved copies when the secret is right; otherwise the status and code it answered. */
    async status(): Promise<StandaloneAnswer & { saved?: z.infer<typeof StandaloneStatusSchema>['saved'] }> {
      const answer = await send({ action: 'status' });
      if (answer.status !== 200) return failure(answer);
      const parsed = StandaloneStatusSchema.safeParse(answer.body);
      if (!parsed.success) return { status: 502, code: 'invalid_answer' };
      return { status: 200, saved: parsed.data.saved };
    },
    /**
     * The version on disk of a plugin (`plugins/<dir>/<file>.php`) or theme (`themes/<stylesheet>`),
     * read without WordPress (connector 1.7.0+; an older path answers 400 `unknown_action`);
     * `version` null: not there, or no version header.
     */
    async version(target: string): Promise<StandaloneAnswer & { version?: string | null }> {
      const answer = await send({ action: 'version', target });
      if (answer.status !== 200) return failure(answer);
      const parsed = StandaloneVersionSchema.safeParse(answer.body);
      return parsed.success ? { status: 200, version: parsed.data.version } : { status: 502, code: 'invalid_answer' };
    },
    /** Puts the saved copy `id` back at `target`; 200 when it is back (or already was). */
    async restore(id: string, target: string): Promise<StandaloneAnswer> {
      const answer = await send({ action: 'restore', id, target });
      if (answer.status !== 200) return failure(answer);
      return StandaloneRestoredSchema.safeParse(answer.body).success
        ? { status: 200 }
        : { status: 502, code: 'invalid_answer' };
    },
  };
}

export type StandaloneRollback = ReturnType<typeof createStandaloneRollback>;
