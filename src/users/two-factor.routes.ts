import { createRoute, OpenAPIHono, z, type RouteConfig } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../http/auth.js';
import { jsonContent, problemResponses } from '../http/openapi.js';
import { commonProblems } from '../shared/errors.js';
import { twoFactorProblems } from './two-factor.errors.js';
import type { TwoFactorStatus } from './two-factor.service.js';
import type { SessionSummary, UsersService } from './users.service.js';

const tags = ['Users'];
const ME = 'A user’s own (`me`: the token’s user) or, for an owner, any user’s.';

const UserIdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'id', in: 'path' }, description: 'A user id, or `me`' }),
});
const SessionParams = UserIdParam.extend({
  sessionId: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'sessionId', in: 'path' } }),
});

const TwoFactorStatusSchema = z
  .object({
    enabled: z.boolean(),
    enabledAt: z.string().nullable(),
    pending: z.boolean().openapi({ description: 'An enrolment was begun and awaits its first code' }),
    recoveryCodesLeft: z.number().int(),
    required: z.boolean().openapi({ description: 'Whether owners require two-factor of every user' }),
  })
  .openapi('TwoFactorStatus');
const EnrolmentSchema = z
  .object({
    secret: z.string().openapi({ description: 'The base32 TOTP secret (SHA-1, 6 digits, 30 s)' }),
    uri: z.string().openapi({ description: 'The otpauth:// URI an authenticator app reads' }),
    qrSvg: z.string().openapi({ description: 'The URI as an SVG QR code' }),
  })
  .openapi('TwoFactorEnrolment');
const RecoveryCodesSchema = z
  .object({ recoveryCodes: z.array(z.string()).openapi({ description: 'Ten single-use codes, shown only now' }) })
  .openapi('RecoveryCodes');
const SessionSchema = z
  .object({
    id: z.string(),
    createdAt: z.string(),
    lastSeenAt: z.string(),
    expiresAt: z.string(),
    address: z.string().nullable(),
    userAgent: z.string().nullable(),
    current: z.boolean().openapi({ description: 'The session asking (never, over the API: it uses tokens)' }),
  })
  .openapi('Session');
const Code = z.object({ code: z.string().min(1).max(64) });

const json = <T extends z.ZodType>(schema: T, required = true) => ({
  required,
  content: { 'application/json': { schema } },
});

const routes = {
  status: createRoute({
    method: 'get',
    path: '/users/{id}/two-factor',
    operationId: 'getTwoFactor',
    tags,
    summary: 'Two-factor status',
    description: ME,
    request: { params: UserIdParam },
    responses: {
      200: jsonContent(TwoFactorStatusSchema, 'The status'),
      ...problemResponses(400, 403, 404),
    },
  }),
  begin: createRoute({
    method: 'post',
    path: '/users/{id}/two-factor',
    operationId: 'beginTwoFactor',
    tags,
    summary: 'Begin a two-factor enrolment',
    description:
      'One’s own only. A new TOTP secret (pending until confirmed; beginning again replaces it). 409 `two-factor-already-enabled` when on.',
    request: { params: UserIdParam },
    responses: {
      201: jsonContent(EnrolmentSchema, 'The secret, its URI and QR code'),
      ...problemResponses(400, 403, 404, 409),
    },
  }),
  confirm: createRoute({
    method: 'post',
    path: '/users/{id}/two-factor/confirm',
    operationId: 'confirmTwoFactor',
    tags,
    summary: 'Confirm the enrolment with a code',
    description:
      'One’s own only. A code the app made from the pending secret turns two-factor on; the ten recovery codes are returned once. 400 `two-factor-code-invalid`, 409 `two-factor-not-pending`.',
    request: { params: UserIdParam, body: json(Code) },
    responses: {
      200: jsonContent(RecoveryCodesSchema, 'Two-factor is on'),
      ...problemResponses(400, 403, 404, 409, 413, 415),
    },
  }),
  disable: createRoute({
    method: 'delete',
    path: '/users/{id}/two-factor',
    operationId: 'disableTwoFactor',
    tags,
    summary: 'Turn two-factor off, or reset another user’s',
    description: `${ME} One’s own needs \`{"code"}\` (a current or recovery code) or \`{"password"}\` (400 \`two-factor-proof-required\`, \`two-factor-code-invalid\`, \`current-password-incorrect\`); an owner resets another user’s without either (event \`user.two_factor_reset\`).`,
    request: {
      params: UserIdParam,
      body: json(z.object({ code: z.string().max(64).optional(), password: z.string().max(1024).optional() }), false),
    },
    responses: { 204: { description: 'Off' }, ...problemResponses(400, 403, 404, 409, 413, 415) },
  }),
  recoveryCodes: createRoute({
    method: 'post',
    path: '/users/{id}/two-factor/recovery-codes',
    operationId: 'regenerateRecoveryCodes',
    tags,
    summary: 'Make new recovery codes',
    description: 'One’s own only; a current TOTP code proves it. The old codes stop working.',
    request: { params: UserIdParam, body: json(Code) },
    responses: {
      200: jsonContent(RecoveryCodesSchema, 'The new codes, shown once'),
      ...problemResponses(400, 403, 404, 409, 413, 415),
    },
  }),
  requirement: createRoute({
    method: 'get',
    path: '/users/two-factor-requirement',
    operationId: 'getTwoFactorRequirement',
    tags,
    summary: 'Whether two-factor is required',
    description: 'Owners only.',
    responses: { 200: jsonContent(z.object({ required: z.boolean() }), 'The policy'), ...problemResponses(403) },
  }),
  setRequirement: createRoute({
    method: 'put',
    path: '/users/two-factor-requirement',
    operationId: 'setTwoFactorRequirement',
    tags,
    summary: 'Require two-factor of every user, or not',
    description:
      'Owners only. While required, a dashboard user without two-factor is sent to set it up before any other page; API tokens keep working.',
    request: { body: json(z.object({ required: z.boolean() })) },
    responses: {
      200: jsonContent(z.object({ required: z.boolean() }), 'The policy now'),
      ...problemResponses(400, 403, 413, 415),
    },
  }),
  sessions: createRoute({
    method: 'get',
    path: '/users/{id}/sessions',
    operationId: 'listSessions',
    tags,
    summary: 'A user’s dashboard sessions',
    description: `${ME} Most recently seen first.`,
    request: { params: UserIdParam },
    responses: {
      200: jsonContent(z.object({ items: z.array(SessionSchema) }), 'The sessions'),
      ...problemResponses(400, 403, 404),
    },
  }),
  revokeAll: createRoute({
    method: 'delete',
    path: '/users/{id}/sessions',
    operationId: 'revokeSessions',
    tags,
    summary: 'End every session of a user',
    description: `${ME} Their open event streams end too.`,
    request: { params: UserIdParam },
    responses: {
      200: jsonContent(z.object({ ended: z.number().int() }), 'How many ended'),
      ...problemResponses(400, 403, 404),
    },
  }),
  revoke: createRoute({
    method: 'delete',
    path: '/users/{id}/sessions/{sessionId}',
    operationId: 'revokeSession',
    tags,
    summary: 'End one session',
    description: `${ME} Its open event streams end too. 404 \`session-not-found\`.`,
    request: { params: SessionParams },
    responses: { 204: { description: 'Ended' }, ...problemResponses(400, 403, 404) },
  }),
} satisfies Record<string, RouteConfig>;

const iso = (at: Date | null) => at?.toISOString() ?? null;
const statusView = (s: TwoFactorStatus) => ({ ...s, enabledAt: iso(s.enabledAt) });
const sessionView = (s: SessionSummary) => ({
  ...s,
  createdAt: s.createdAt.toISOString(),
  lastSeenAt: s.lastSeenAt.toISOString(),
  expiresAt: s.expiresAt.toISOString(),
});

/**
 * Whose sessions or two-factor a request is about: `me` (or one's own id) is the token's user; an
 * owner may name anyone (an unknown id: 404 `user-not-found`, from the service), nobody else may.
 */
async function whose(c: Context<AppEnv>, id: string, users: UsersService): Promise<{ userId: string; self: boolean }> {
  const access = c.get('access');
  if (id === 'me' || id === access.userId) {
    if (!access.userId)
      throw twoFactorProblems.noUser.create('an operator token belongs to no user: name a user id (owners only)');
    return { userId: access.userId, self: true };
  }
  if (access.role !== 'owner')
    throw commonProblems.forbidden.create('only an owner may see or change another user’s sessions and two-factor');
  await users.twoFactor.status(id); // 404 user-not-found for an unknown id
  return { userId: id, self: false };
}

function ownOnly(target: { self: boolean }): void {
  if (!target.self) throw commonProblems.forbidden.create('only the user themselves may do this (use `me`)');
}

/** Two-factor and sessions over the API (users.routes.ts mounts them; http/permissions.ts lets every role reach its own). */
export function createTwoFactorRoutes({ users }: { users: UsersService }) {
  return new OpenAPIHono<AppEnv>()
    .openapi(routes.requirement, async (c) => c.json({ required: await users.twoFactor.required() }, 200))
    .openapi(routes.setRequirement, async (c) =>
      c.json({ required: await users.twoFactor.setRequired(c.req.valid('json').required, c.get('actor')) }, 200),
    )
    .openapi(routes.status, async (c) => {
      const target = await whose(c, c.req.valid('param').id, users);
      return c.json(statusView(await users.twoFactor.status(target.userId)), 200);
    })
    .openapi(routes.begin, async (c) => {
      const target = await whose(c, c.req.valid('param').id, users);
      ownOnly(target);
      return c.json(await users.twoFactor.begin(target.userId), 201);
    })
    .openapi(routes.confirm, async (c) => {
      const target = await whose(c, c.req.valid('param').id, users);
      ownOnly(target);
      return c.json(await users.twoFactor.confirm(target.userId, c.req.valid('json').code), 200);
    })
    .openapi(routes.disable, async (c) => {
      const target = await whose(c, c.req.valid('param').id, users);
      if (target.self) await users.twoFactor.disable(target.userId, c.req.valid('json'), c.get('actor'));
      else await users.twoFactor.reset(target.userId, c.get('actor'));
      return c.body(null, 204);
    })
    .openapi(routes.recoveryCodes, async (c) => {
      const target = await whose(c, c.req.valid('param').id, users);
      ownOnly(target);
      return c.json(await users.twoFactor.regenerateRecoveryCodes(target.userId, c.req.valid('json').code), 200);
    })
    .openapi(routes.sessions, async (c) => {
      const target = await whose(c, c.req.valid('param').id, users);
      return c.json({ items: (await users.listSessions(target.userId)).map(sessionView) }, 200);
    })
    .openapi(routes.revokeAll, async (c) => {
      const target = await whose(c, c.req.valid('param').id, users);
      return c.json({ ended: await users.revokeOtherSessions(target.userId, null, c.get('actor')) }, 200);
    })
    .openapi(routes.revoke, async (c) => {
      const { id, sessionId } = c.req.valid('param');
      await users.revokeSession((await whose(c, id, users)).userId, sessionId, c.get('actor'));
      return c.body(null, 204);
    });
}
