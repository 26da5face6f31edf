import { z } from '@hono/zod-openapi';
import { defineProblem } from '../shared/errors.js';

const DEFAULT_PAGE_LIMIT = 50;
const MAX_PAGE_LIMIT = 200;

const paginationProblems = {
  invalidCursor: defineProblem('invalid-cursor', 400, 'The cursor is not valid'),
};

export const PaginationQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE_LIMIT)
    .default(DEFAULT_PAGE_LIMIT)
    .openapi({ description: `Items per page (default ${DEFAULT_PAGE_LIMIT}, at most ${MAX_PAGE_LIMIT}).` }),
  cursor: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .openapi({ description: 'Opaque cursor from the previous page’s `nextCursor`.' }),
});

export const pageSchema = <T extends z.ZodType>(item: T, name: string) =>
  z
    .object({
      items: z.array(item),
      nextCursor: z
        .string()
        .nullable()
        .openapi({ description: 'Pass as `cursor` to get the next page; null on the last page.' }),
    })
    .openapi(name);

/** Cursors are the last item's sort key, base64url-encoded so clients treat them as opaque. */
const encodeCursor = (key: string) => Buffer.from(key, 'utf8').toString('base64url');

const ID_KEY = /^[a-z]+_[0-9a-z]{26}$/;

export function decodeCursor(cursor: string | undefined, keyPattern: RegExp = ID_KEY): string | undefined {
  if (cursor === undefined) return undefined;
  const key = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!keyPattern.test(key))
    throw paginationProblems.invalidCursor.create('the cursor does not come from this API; start again without it');
  return key;
}

/** `rows` holds up to limit + 1 rows: the extra one tells whether another page follows. */
export function toPage<T>(
  rows: T[],
  limit: number,
  keyOf: (row: T) => string = (row) => (row as { id: string }).id,
): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit && last !== undefined ? encodeCursor(keyOf(last)) : null };
}

/** Pages through a list read whole from a site, in code-point order of `key` (the order the cursor compares in). */
export function pageOfList<T>(
  all: T[],
  { limit, cursor }: { limit: number; cursor?: string },
  key: (item: T) => string,
  keyPattern: RegExp,
) {
  const after = decodeCursor(cursor, keyPattern);
  const sorted = [...all].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  const rest = after === undefined ? sorted : sorted.filter((item) => key(item) > after);
  return toPage(rest.slice(0, limit + 1), limit, key);
}
