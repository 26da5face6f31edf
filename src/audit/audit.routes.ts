import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/auth.js';
import { jsonContent, problemResponses } from '../http/openapi.js';
import { decodeCursor, pageSchema, PaginationQuery, toPage } from '../http/pagination.js';
import type { AuditLogFilter } from './audit-log.repository.js';
import type { AuditLogService } from './audit-log.service.js';
import { auditOutcomes, auditSources, type AuditLogRow } from './audit-log.table.js';

const tags = ['Audit log'];
const NDJSON_CONTENT_TYPE = 'application/x-ndjson';

const AuditEntrySchema = z
  .object({
    id: z.string(),
    at: z.string(),
    source: z.enum(auditSources).openapi({ description: '`api` or `dashboard`.' }),
    actor: z
      .object({
        kind: z.enum(['token', 'user']).nullable(),
        id: z.string().nullable(),
        name: z.string().nullable().openapi({
          description: 'The token’s or user’s name at the time; for a failed sign-in the name tried.',
        }),
      })
      .openapi({ description: 'Who: kind and id null when the request carried no valid credential.' }),
    userId: z
      .string()
      .nullable()
      .openapi({ description: 'The user behind it (a token’s user); null for an operator token.' }),
    address: z.string().openapi({ description: 'The client’s address (`SITEWARDEN_TRUSTED_PROXIES`).' }),
    method: z.string().nullable(),
    action: z
      .string()
      .openapi({ description: 'The matched route’s pattern (`/api/sites/:siteId/backups`), or `sign-in`.' }),
    siteId: z.string().nullable(),
    target: z.object({ kind: z.string(), id: z.string() }).nullable(),
    status: z.number().int(),
    outcome: z.enum(auditOutcomes).openapi({ description: '`ok`, `refused` (401, 403, 429) or `failed`.' }),
    problem: z.string().nullable().openapi({ description: 'The problem type when the answer was a problem.' }),
  })
  .openapi('AuditEntry');

const auditEntryView = (row: AuditLogRow) => ({
  id: row.id,
  at: row.at.toISOString(),
  source: row.source,
  actor: { kind: row.actorKind, id: row.actorId, name: row.actorName },
  userId: row.userId,
  address: row.address,
  method: row.method,
  action: row.action,
  siteId: row.siteId,
  target: row.targetKind !== null && row.targetId !== null ? { kind: row.targetKind, id: row.targetId } : null,
  status: row.status,
  outcome: row.outcome,
  problem: row.problem,
});

const id = z.string().min(1).max(64);
const AuditFilters = z.object({
  site: id.optional().openapi({ description: 'Entries about this site (its id).' }),
  actor: id
    .optional()
    .openapi({ description: 'Entries of this token, or of this user (signed in, or through their tokens): an id.' }),
  since: z.iso.datetime({ offset: true }).optional().openapi({ description: 'Entries at or after this time.' }),
  until: z.iso.datetime({ offset: true }).optional().openapi({ description: 'Entries before this time.' }),
  outcome: z.enum(auditOutcomes).optional(),
});

/** The query's filters as the repository takes them. */
export const auditFilter = (query: z.infer<typeof AuditFilters>): AuditLogFilter => ({
  siteId: query.site,
  actorId: query.actor,
  since: query.since ? new Date(query.since) : undefined,
  until: query.until ? new Date(query.until) : undefined,
  outcome: query.outcome,
});

const OWNER = 'Owners only.';

const routes = {
  list: createRoute({
    method: 'get',
    path: '/audit',
    operationId: 'listAuditLog',
    tags,
    summary: 'The audit log',
    description: `Every state-changing request (API and dashboard), refusals included, and every sign-in attempt and sign-out, newest first: who, from which address, which route, which site and target, the status and outcome. Never a body, a query string, a password or a token. Filterable by site, actor, since, until and outcome. Kept \`SITEWARDEN_AUDIT_RETENTION_DAYS\` days. ${OWNER}`,
    request: { query: PaginationQuery.extend(AuditFilters.shape) },
    responses: {
      200: jsonContent(pageSchema(AuditEntrySchema, 'AuditPage'), 'A page of entries'),
      ...problemResponses(400, 403),
    },
  }),
  export: createRoute({
    method: 'get',
    path: '/audit/export',
    operationId: 'exportAuditLog',
    tags,
    summary: 'Export the audit log as JSON lines',
    description: `Every entry the filters select (the same as \`GET /api/audit\`'s), oldest first, one \`AuditEntry\` JSON object a line, streamed. ${OWNER}`,
    request: { query: AuditFilters },
    responses: {
      200: {
        description: 'One entry a line',
        content: { [NDJSON_CONTENT_TYPE]: { schema: { type: 'string', description: 'JSON lines (`AuditEntry`)' } } },
      },
      ...problemResponses(400, 403),
    },
  }),
};

/** The entries as JSON lines, read from the database a page at a time as the client takes them. */
export function auditLines(
  auditLog: Pick<AuditLogService, 'entries'>,
  filter: AuditLogFilter,
): ReadableStream<Uint8Array> {
  const entries = auditLog.entries(filter);
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let chunk = '';
        for (let i = 0; i < 100; i++) {
          const next = await entries.next();
          if (next.done) {
            if (chunk) controller.enqueue(encoder.encode(chunk));
            controller.close();
            return;
          }
          chunk += `${JSON.stringify(auditEntryView(next.value))}\n`;
        }
        controller.enqueue(encoder.encode(chunk));
      },
      async cancel() {
        await entries.return(undefined);
      },
    },
    { highWaterMark: 1 },
  );
}

/** `GET /api/audit` and its export (the permission table gives both to owners). */
export function createAuditRoutes({ auditLog }: { auditLog: Pick<AuditLogService, 'list' | 'entries'> }) {
  return new OpenAPIHono<AppEnv>()
    .openapi(routes.list, async (c) => {
      const { limit, cursor, ...filters } = c.req.valid('query');
      const rows = await auditLog.list({ ...auditFilter(filters), before: decodeCursor(cursor), limit: limit + 1 });
      const page = toPage(rows, limit);
      return c.json({ items: page.items.map(auditEntryView), nextCursor: page.nextCursor }, 200);
    })
    .openapi(
      routes.export,
      // `as never`: the typed responses take any content type naming `json` for one JSON document
      // (c.json), which JSON lines are not; the stream is the body as documented.
      (c) =>
        new Response(auditLines(auditLog, auditFilter(c.req.valid('query'))), {
          status: 200,
          headers: {
            'content-type': NDJSON_CONTENT_TYPE,
            'content-disposition': 'attachment; filename="sitewarden-audit.jsonl"',
          },
        }) as never,
    );
}
