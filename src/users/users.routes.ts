import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/auth.js';
import { jsonContent, problemResponses } from '../http/openapi.js';
import { roles } from '../shared/actor.js';
import { randomPassword } from './passwords.js';
import { createTwoFactorRoutes } from './two-factor.routes.js';
import { usersProblems } from './users.errors.js';
import type { UsersService, UserSummary } from './users.service.js';

const tags = ['Users'];
const OWNERS_ONLY = 'Owners only.';

const UserSchema = z
  .object({
    id: z.string(),
    username: z.string(),
    role: z.enum(roles),
    scopeTags: z
      .array(z.string())
      .nullable()
      .openapi({ description: 'Site scope: the user sees only sites carrying any of these tags (null: every site).' }),
    createdAt: z.string(),
    lastSignedInAt: z.string().nullable(),
  })
  .openapi('User');

const view = (user: UserSummary) => ({
  id: user.id,
  username: user.username,
  role: user.role,
  scopeTags: user.scopeTags,
  createdAt: user.createdAt.toISOString(),
  lastSignedInAt: user.lastSignedInAt?.toISOString() ?? null,
});

const UserIdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'id', in: 'path' } }),
});

const json = <T extends z.ZodType>(schema: T) => ({ required: true, content: { 'application/json': { schema } } });

const routes = {
  list: createRoute({
    method: 'get',
    path: '/users',
    operationId: 'listUsers',
    tags,
    summary: 'Dashboard users',
    description: OWNERS_ONLY,
    responses: {
      200: jsonContent(z.object({ items: z.array(UserSchema) }), 'The users'),
      ...problemResponses(403),
    },
  }),
  create: createRoute({
    method: 'post',
    path: '/users',
    operationId: 'createUser',
    tags,
    summary: 'Add a user',
    description: `${OWNERS_ONLY} Without \`password\` a random one is made and returned once.`,
    request: {
      body: json(
        z.object({
          username: z.string().min(1).max(100),
          password: z.string().min(1).max(1024).optional(),
          role: z.enum(roles).default('viewer'),
        }),
      ),
    },
    responses: {
      201: jsonContent(UserSchema.extend({ password: z.string().optional() }), 'The user'),
      ...problemResponses(400, 403, 409, 413, 415),
    },
  }),
  update: createRoute({
    method: 'patch',
    path: '/users/{id}',
    operationId: 'updateUser',
    tags,
    summary: 'Change a user’s role or site scope',
    description: `${OWNERS_ONLY} Ends the user’s sessions and event streams; their tokens follow the new role and scope at once. The last owner keeps the role (409 \`last-owner\`). \`scopeTags\` limits the user to the sites carrying any of them (\`null\`: every site); an owner sees every site and a client’s scope names at least one tag (400 \`scope-invalid\`, also for a tag with control characters).`,
    request: {
      params: UserIdParam,
      body: json(
        z
          .object({
            role: z.enum(roles).optional(),
            scopeTags: z.array(z.string().max(100)).max(32).nullable().optional(),
          })
          .openapi('UserChange'),
      ),
    },
    responses: { 200: jsonContent(UserSchema, 'The user now'), ...problemResponses(400, 403, 404, 409, 413, 415) },
  }),
  resetPassword: createRoute({
    method: 'post',
    path: '/users/{id}/reset-password',
    operationId: 'resetUserPassword',
    tags,
    summary: 'Reset a user’s password',
    description: `${OWNERS_ONLY} A random password, returned once; the user’s sessions end.`,
    request: { params: UserIdParam },
    responses: {
      200: jsonContent(z.object({ password: z.string() }), 'The new password, shown once'),
      ...problemResponses(403, 404),
    },
  }),
  delete: createRoute({
    method: 'delete',
    path: '/users/{id}',
    operationId: 'deleteUser',
    tags,
    summary: 'Delete a user',
    description: `${OWNERS_ONLY} Their sessions end and their tokens are refused. Never the last owner (409 \`last-owner\`).`,
    request: { params: UserIdParam },
    responses: { 204: { description: 'Deleted' }, ...problemResponses(403, 404, 409) },
  }),
};

/** Users over the API, for owners (http/permissions.ts): list, add, change a role, reset a password, delete. */
export function createUsersRoutes({ users }: { users: UsersService }) {
  return new OpenAPIHono<AppEnv>()
    .openapi(routes.list, async (c) => c.json({ items: (await users.list()).map(view) }, 200))
    .openapi(routes.create, async (c) => {
      const input = c.req.valid('json');
      const password = input.password ?? randomPassword();
      const user = await users.create(input.username, password, input.role);
      return c.json({ ...view(user), ...(input.password ? {} : { password }) }, 201);
    })
    .openapi(routes.update, async (c) => {
      const { id } = c.req.valid('param');
      const { role, scopeTags } = c.req.valid('json');
      let user = role === undefined ? await users.find(id) : await users.setRole(id, role, c.get('actor'));
      if (!user) throw usersProblems.notFound.create(`no user has the id ${id}`);
      if (scopeTags !== undefined) user = await users.setScope(id, scopeTags, c.get('actor'));
      return c.json(view(user), 200);
    })
    .openapi(routes.resetPassword, async (c) => {
      const { id } = c.req.valid('param');
      const user = await users.find(id);
      if (!user) throw usersProblems.notFound.create(`no user has the id ${id}`);
      return c.json({ password: await users.resetPassword(user.username) }, 200);
    })
    .openapi(routes.delete, async (c) => {
      await users.delete(c.req.valid('param').id, c.get('actor'));
      return c.body(null, 204);
    })
    .route('/', createTwoFactorRoutes({ users }));
}
