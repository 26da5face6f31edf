import { z } from '@hono/zod-openapi';
import { defineProblem } from '../shared/errors.js';

export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 200;

export const paginationProblems = {
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
  cursor: z.string().min(1).max(200).optional().openapi({ description: 'Opaque cursor from the previous page’s `nextCursor`.' }),
});

export const pageSchema = <T extends z.ZodType>(item: T, name: string) =>
  z
    .object({
      items: z.array(item),
      nextCursor: z.string().nullable().openapi({ description: 'Pass as `cursor` to get the next page; null on the last page.' }),
    })
    .openapi(name);

/** Cursors are the last item's sort key, base64url-encoded so clients treat them as opaque. */
export const encodeCursor = (key: string) => Buffer.from(key, 'utf8').toString('base64url');

export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const key = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[a-z]+_[0-9a-z]{26}$/.test(key)) throw paginationProblems.invalidCursor.create('the cursor does not come from this API; start again without it');
  return key;
}

export function toPage<T extends { id: string }>(rows: T[], limit: number): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit && last ? encodeCursor(last.id) : null };
}
