import type { Context } from 'hono';
import type { z } from '@hono/zod-openapi';
import { validationError } from './problem.js';

/**
 * Parameters such as `url` or `slug` may come as a JSON body, a form body or the query string.
 * Routes declare all three (see `bodyOrQuery`); this picks whichever the client used.
 */
export function bodyOrQueryRequest<T extends z.ZodObject>(schema: T) {
  return {
    body: {
      required: false,
      content: {
        'application/json': { schema },
        'application/x-www-form-urlencoded': { schema },
      },
    },
    query: schema.partial(),
  } as const;
}

export function readBodyOrQuery<T extends z.ZodObject>(c: Context, schema: T): z.infer<T> {
  const valid = (c.req.valid as (target: string) => Record<string, unknown> | undefined).bind(c.req);
  const contentType = c.req.header('content-type') ?? '';
  const fromBody = contentType.includes('json')
    ? valid('json')
    : contentType.includes('form')
      ? valid('form')
      : undefined;
  const location = fromBody && Object.keys(fromBody).length > 0 ? 'body' : 'query';
  const source = location === 'body' ? fromBody : c.req.query();
  const parsed = schema.safeParse(source);
  if (!parsed.success) throw validationError(parsed.error, location);
  return parsed.data;
}
