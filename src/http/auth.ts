import type { Context, MiddlewareHandler } from 'hono';
import type { Access, Actor, Role, SiteScope } from '../shared/actor.js';
import { commonProblems, defineProblem } from '../shared/errors.js';
import type { AuthFailureLimiter } from './auth-rate-limit.js';
import { clientAddress } from './client-address.js';

/** Who a request's token belongs to. The tokens feature implements TokenAuthenticator; http/ imports no feature. */
export interface AuthenticatedToken {
  id: string;
  name: string;
  /** Deprecated alias of `role`: `write` for owner and manager, `read` otherwise. */
  scope: 'read' | 'write';
  /** The effective role at this request: the lower of the token's own and its user's. */
  role: Role;
  /** The token's user; null for an operator token. */
  userId: string | null;
  /** The effective site scope at this request: the intersection of the token's own and its user's. */
  sites: SiteScope;
}

export interface TokenAuthenticator {
  authenticate(token: string): Promise<AuthenticatedToken | null>;
}

export type AppEnv = { Variables: { token: AuthenticatedToken; actor: Actor; access: Access } };

const authProblems = {
  tooManyFailures: defineProblem('too-many-failed-authentications', 429, 'Too many failed authentications'),
};

/**
 * Bearer-token authentication for everything under /api except the paths listed as public: sets
 * the request's `access` (actor, effective role, site scope). What each route needs is checked
 * after it, by one middleware (http/permissions.ts).
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
  const countOrRefuse = async (c: Context, address: string) => {
    if (!limiter) return;
    const retryAfter = await limiter.countFailure(address);
    if (retryAfter === 0) return;
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
      await countOrRefuse(c, address);
      c.header('WWW-Authenticate', 'Bearer realm="sitewarden"');
      throw commonProblems.unauthorized.create('send an API token as `Authorization: Bearer <token>`');
    }
    const token = await tokens.authenticate(match[1]!);
    if (!token) {
      await countOrRefuse(c, address);
      c.header('WWW-Authenticate', 'Bearer realm="sitewarden", error="invalid_token"');
      throw commonProblems.unauthorized.create('the API token is unknown, revoked or expired');
    }
    const actor: Actor = { kind: 'token', id: token.id };
    c.set('token', token);
    c.set('actor', actor);
    c.set('access', { actor, role: token.role, sites: token.sites, userId: token.userId });
    return next();
  };
}
