import type { Context, MiddlewareHandler } from 'hono';
import type { Actor } from '../shared/actor.js';
import { commonProblems, defineProblem } from '../shared/errors.js';
import type { AuthFailureLimiter } from './auth-rate-limit.js';
import { clientAddress } from './client-address.js';

/** Who a request's token belongs to. The tokens feature implements TokenAuthenticator; http/ imports no feature. */
export interface AuthenticatedToken {
  id: string;
  name: string;
  scope: 'read' | 'write';
}

export interface TokenAuthenticator {
  authenticate(token: string): AuthenticatedToken | null;
}

export type AppEnv = { Variables: { token: AuthenticatedToken; actor: Actor } };

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

const authProblems = {
  tooManyFailures: defineProblem('too-many-failed-authentications', 429, 'Too many failed authentications'),
};

/**
 * Bearer-token authentication for everything under /api except the paths listed as public.
 * A read token may only read; anything that changes state needs a write token.
 */
export function bearerAuth({
  tokens,
  publicPaths,
  limiter,
  onLimited,
}: {
  tokens: TokenAuthenticator;
  publicPaths: ReadonlySet<string>;
  limiter?: AuthFailureLimiter;
  onLimited?: () => void;
}): MiddlewareHandler<AppEnv> {
  // A failed authentication counts against the address; past the limit the answer is a 429 (with
  // Retry-After) instead of a 401. A valid token always passes, whatever its address sent before.
  const countOrRefuse = (c: Context, address: string) => {
    if (!limiter) return;
    const retryAfter = limiter.retryAfterSeconds(address);
    if (retryAfter === 0) {
      limiter.fail(address);
      return;
    }
    onLimited?.();
    c.header('Retry-After', String(retryAfter));
    throw authProblems.tooManyFailures.create(
      `too many requests from this address carried no valid API token; try again in ${retryAfter} s`,
    );
  };
  return async (c, next) => {
    if (publicPaths.has(c.req.path)) return next();
    // The client's address, behind a trusted proxy from X-Forwarded-For (http/client-address.ts).
    const address = limiter ? clientAddress(c) : '';
    const header = c.req.header('authorization');
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) {
      countOrRefuse(c, address);
      c.header('WWW-Authenticate', 'Bearer realm="sitewarden"');
      throw commonProblems.unauthorized.create('send an API token as `Authorization: Bearer <token>`');
    }
    const token = tokens.authenticate(match[1]!);
    if (!token) {
      countOrRefuse(c, address);
      c.header('WWW-Authenticate', 'Bearer realm="sitewarden", error="invalid_token"');
      throw commonProblems.unauthorized.create('the API token is unknown or revoked');
    }
    if (!READ_METHODS.has(c.req.method) && token.scope !== 'write') {
      throw commonProblems.forbidden.create(
        `the token "${token.name}" has the read scope; ${c.req.method} needs a write token`,
      );
    }
    c.set('token', token);
    c.set('actor', { kind: 'token', id: token.id });
    return next();
  };
}
