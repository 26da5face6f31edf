import { OpenAPIHono } from '@hono/zod-openapi';
import { bodyLimit } from 'hono/body-limit';
import type { MiddlewareHandler } from 'hono';
import { commonProblems } from '../shared/errors.js';
import type { AppEnv } from './auth.js';
import { problemResponse, validationError } from './problem.js';

/** The plumbing every API route shares; src/app.ts mounts the features' routes on it. */
const MAX_REQUEST_BODY_BYTES = 1024 * 1024;

/** A router whose invalid requests answer the validation-failed problem, naming where the error is. */
export function createApiRouter() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success)
        throw validationError(
          result.error,
          result.target === 'param'
            ? 'path'
            : result.target === 'json' || result.target === 'form'
              ? 'body'
              : result.target,
        );
    },
  });
}

export function limitRequestBodies(): MiddlewareHandler<AppEnv> {
  const limitBody = bodyLimit({
    maxSize: MAX_REQUEST_BODY_BYTES,
    onError: () => {
      throw commonProblems.payloadTooLarge.create(`request bodies are limited to ${MAX_REQUEST_BODY_BYTES} bytes`);
    },
  });
  // GET and HEAD have no body; skipping the check spares @hono/node-server building a full Request on every read.
  return (c, next) => (c.req.method === 'GET' || c.req.method === 'HEAD' ? next() : limitBody(c, next));
}

/** Unknown paths answer not-found; a known path with another method answers method-not-allowed with Allow. */
export function answerUnknownRoutes(app: OpenAPIHono<AppEnv>): void {
  const knownRoutes = app.routes
    .filter((route) => route.method !== 'ALL')
    .map((route) => ({ method: route.method, pattern: routePattern(route.path) }));
  app.notFound((c) => {
    const allowed = [
      ...new Set(knownRoutes.filter((route) => route.pattern.test(c.req.path)).map((route) => route.method)),
    ];
    if (allowed.length > 0) {
      c.header('Allow', allowed.join(', '));
      return problemResponse(
        c,
        commonProblems.methodNotAllowed.create(
          `${c.req.method} is not supported on ${c.req.path}; use ${allowed.join(' or ')}`,
        ),
      );
    }
    return problemResponse(c, commonProblems.notFound.create(`there is no route ${c.req.method} ${c.req.path}`));
  });
}

function routePattern(path: string): RegExp {
  const escaped = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\/:[^/]+/g, '/[^/]+');
  return new RegExp(`^${escaped}/?$`);
}
