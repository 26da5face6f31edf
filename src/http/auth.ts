import type { MiddlewareHandler } from 'hono';
import { commonProblems } from '../shared/errors.js';
import type { AuthenticatedToken, TokensService } from '../tokens/tokens.service.js';

export type AppEnv = { Variables: { token: AuthenticatedToken } };

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Bearer-token authentication for everything under /api except the paths listed as public.
 * A read token may only read; anything that changes state needs a write token.
 */
export function bearerAuth({ tokens, publicPaths }: { tokens: TokensService; publicPaths: ReadonlySet<string> }): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (publicPaths.has(c.req.path)) return next();
    const header = c.req.header('authorization');
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) {
      c.header('WWW-Authenticate', 'Bearer realm="sitewarden"');
      throw commonProblems.unauthorized.create('send an API token as `Authorization: Bearer <token>`');
    }
    const token = tokens.authenticate(match[1]!);
    if (!token) {
      c.header('WWW-Authenticate', 'Bearer realm="sitewarden", error="invalid_token"');
      throw commonProblems.unauthorized.create('the API token is unknown or revoked');
    }
    if (!READ_METHODS.has(c.req.method) && token.scope !== 'write') {
      throw commonProblems.forbidden.create(`the token "${token.name}" has the read scope; ${c.req.method} needs a write token`);
    }
    c.set('token', token);
    return next();
  };
}
