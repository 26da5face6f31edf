import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/auth.js';
import { jsonContent, problemResponses } from '../http/openapi.js';
import { roles } from '../shared/actor.js';
import { roleOfScope, type TokenSummary, type TokensService } from './tokens.service.js';

const tags = ['Tokens'];
const MAX_EXPIRY_DAYS = 3650;

const TokenSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    role: z.enum(roles).openapi({ description: 'The token’s own role; at a request it is lowered to its user’s.' }),
    scope: z.enum(['read', 'write']).openapi({
      description: 'Deprecated alias of `role`: `write` for owner and manager, `read` otherwise.',
      deprecated: true,
    }),
    userId: z.string().nullable().openapi({ description: 'Whose token it is; null for an operator token (CLI).' }),
    prefix: z.string().openapi({ description: 'The token’s first characters, to tell tokens apart.' }),
    createdAt: z.string(),
    lastUsedAt: z.string().nullable(),
    expiresAt: z.string().nullable(),
    tags: z.array(z.string()).nullable().openapi({
      description:
        'The token’s own site scope: only sites carrying any of these tags (null: its user’s scope). At a request intersected with its user’s.',
    }),
    revokedAt: z.string().nullable(),
  })
  .openapi('ApiToken');

const view = (summary: TokenSummary) => ({
  ...summary,
  createdAt: summary.createdAt.toISOString(),
  lastUsedAt: summary.lastUsedAt?.toISOString() ?? null,
  expiresAt: summary.expiresAt?.toISOString() ?? null,
  tags: summary.tags,
  revokedAt: summary.revokedAt?.toISOString() ?? null,
});

const CreateTokenInput = z
  .object({
    name: z.string().trim().min(1).max(100),
    role: z
      .enum(roles)
      .optional()
      .openapi({ description: 'At most the asker’s role (and the user’s). Default viewer.' }),
    scope: z
      .enum(['read', 'write'])
      .optional()
      .openapi({ description: 'Deprecated: `write` is `role: owner`, `read` is `role: viewer`.', deprecated: true }),
    userId: z.string().min(1).max(64).optional().openapi({ description: 'Only an owner names another user.' }),
    expiresInDays: z.number().int().min(1).max(MAX_EXPIRY_DAYS).optional(),
    tags: z.array(z.string().max(100)).max(32).optional().openapi({
      description:
        'Limits the token to the sites carrying any of these tags; within the asker’s and the user’s scope (else 403 `token-scope-too-wide`). Absent: the asker’s scope when limited, else the user’s.',
    }),
  })
  .openapi('CreateTokenInput');

const TokenIdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'id', in: 'path' } }),
});

const routes = {
  list: createRoute({
    method: 'get',
    path: '/tokens',
    operationId: 'listTokens',
    tags,
    summary: 'API tokens',
    description:
      'The tokens of the asking token’s user (revoked ones too); an owner sees every user’s, or one user’s with `userId`. Never the tokens themselves.',
    request: { query: z.object({ userId: z.string().min(1).max(64).optional() }) },
    responses: {
      200: jsonContent(z.object({ items: z.array(TokenSchema) }), 'The tokens'),
      ...problemResponses(400, 403),
    },
  }),
  create: createRoute({
    method: 'post',
    path: '/tokens',
    operationId: 'createToken',
    tags,
    summary: 'Create an API token',
    description:
      'For the asking token’s user, or (an owner only) for `userId`; its role at most the asker’s and the user’s (else 403 `token-role-too-high`). The token is in this answer only.',
    request: { body: { required: true, content: { 'application/json': { schema: CreateTokenInput } } } },
    responses: {
      201: jsonContent(TokenSchema.extend({ token: z.string() }), 'The token, shown once'),
      ...problemResponses(400, 403, 404, 413, 415),
    },
  }),
  revoke: createRoute({
    method: 'delete',
    path: '/tokens/{id}',
    operationId: 'revokeToken',
    tags,
    summary: 'Revoke an API token',
    description: 'One of the asker’s user’s tokens, or (an owner) anyone’s; another’s answers 404 like an unknown id.',
    request: { params: TokenIdParam },
    responses: { 200: jsonContent(TokenSchema, 'The revoked token'), ...problemResponses(403, 404) },
  }),
};

/** Tokens per user over the API: list, create (at most one's role), revoke. */
export function createTokensRoutes({ tokens, clock }: { tokens: TokensService; clock: { now(): Date } }) {
  return new OpenAPIHono<AppEnv>()
    .openapi(routes.list, async (c) => {
      const items = (await tokens.listFor(c.get('access'), c.req.valid('query').userId)).map(view);
      return c.json({ items }, 200);
    })
    .openapi(routes.create, async (c) => {
      const input = c.req.valid('json');
      const days = input.expiresInDays;
      const { token, summary } = await tokens.createFor(c.get('access'), {
        name: input.name,
        role: input.role ?? (input.scope ? roleOfScope(input.scope) : 'viewer'),
        userId: input.userId,
        expiresAt: days === undefined ? null : new Date(clock.now().getTime() + days * 86_400_000),
        tags: input.tags ?? null,
      });
      return c.json({ ...view(summary), token }, 201);
    })
    .openapi(routes.revoke, async (c) =>
      c.json(view(await tokens.revokeFor(c.get('access'), c.req.valid('param').id)), 200),
    );
}
