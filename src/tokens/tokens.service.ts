import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import type { AuthenticatedToken } from '../http/auth.js';
import { hasControlCharacters } from '../http/plain-text.js';
import {
  ALL_SITES,
  intersectScopes,
  isRole,
  lowerRole,
  normaliseScopeTags,
  roleAtLeast,
  scopeOf,
  scopeWithin,
  type Access,
  type Role,
  type SiteScope,
} from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import { commonProblems, defineProblem } from '../shared/errors.js';
import { createId } from '../shared/ids.js';
import { parseTags, type ActiveToken, type TokensRepository } from './tokens.repository.js';
import type { ApiTokenRow } from './tokens.table.js';
import type { Events } from '../shared/event-bus.js';

/** The scopes tokens had before roles: still accepted (`write` is owner, `read` viewer) and reported as an alias. */
export type TokenScope = AuthenticatedToken['scope'];

const tokenProblems = {
  notFound: defineProblem('token-not-found', 404, 'No such API token'),
  ambiguous: defineProblem('token-ambiguous', 409, 'More than one token has that name'),
  nameInvalid: defineProblem('token-name-invalid', 400, 'The token name is not acceptable'),
  roleTooHigh: defineProblem('token-role-too-high', 403, 'A token cannot have a higher role than its user'),
  userNotFound: defineProblem('token-user-not-found', 404, 'No such user to own the token'),
  scopeTooWide: defineProblem('token-scope-too-wide', 403, 'A token cannot see sites its user cannot'),
  tagsInvalid: defineProblem('token-tags-invalid', 400, 'The token’s scope tags are not acceptable'),
};

export interface TokenSummary {
  id: string;
  name: string;
  /** The token's own role; at a request it is lowered to its user's current role. */
  role: Role;
  /** Deprecated alias of `role` (`write` for owner and manager, `read` otherwise). */
  scope: TokenScope;
  /** Whose token it is; null for an operator token made with the CLI. */
  userId: string | null;
  /** The token's own site scope tags (null: its user's scope); at a request intersected with its user's. */
  tags: string[] | null;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

/** What creating a token takes besides its name. */
export interface TokenOptions {
  /** The owning user; null or absent: an operator token (CLI only). */
  userId?: string | null;
  expiresAt?: Date | null;
  /** Limits the token to the sites carrying any of these tags (within its user's scope); null or absent: its user's scope. */
  tags?: readonly string[] | null;
}

/** The role a scope of old stood for. */
export const roleOfScope = (scope: TokenScope): Role => (scope === 'write' ? 'owner' : 'viewer');
/** The deprecated `scope` of a role: whether it may change anything. */
const scopeOfRole = (role: Role): TokenScope => (roleAtLeast(role, 'manager') ? 'write' : 'read');

const BOOTSTRAP_TOKEN_FILE = 'admin-token';
const TOKEN_PREFIX = 'swt_';
/** last_used_at is refreshed at most this often, so authentication does not write on every request. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** Valid tokens remembered (by hash) so a request authenticates without a query. */
const MAX_CACHED_TOKENS = 256;

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

/** A new token, and what is stored of it: its hash and its first characters. */
export function mintToken(): { token: string; tokenHash: string; prefix: string } {
  const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { token, tokenHash: hashToken(token), prefix: token.slice(0, TOKEN_PREFIX.length + 6) };
}

export function createTokensService({
  repository,
  clock,
  events,
}: {
  repository: TokensRepository;
  clock: Clock;
  events: Events;
}) {
  // Recently valid tokens by hash. Emptied on a revoke here and whenever another process (the
  // CLI's `token revoke`) wrote to the database, which SQLite's data_version tells for free. On
  // PostgreSQL (no data_version: other processes of the cluster write) nothing is remembered.
  const valid = new Map<string, ActiveToken>();
  let cachedAtVersion = -1;
  // How often `valid` was emptied: a row read before an emptying (a revoke that went in while the
  // read's answer was on its way) is not remembered after it.
  let clears = 0;
  const forget = () => {
    valid.clear();
    clears++;
  };
  // A user's role changed (or the user went) in this process: the cached rows carry their old role.
  events.subscribe(
    (event) => {
      if (event.event === 'user.role_changed' || event.event === 'user.scope_changed' || event.event === 'user.deleted')
        forget();
    },
    { inline: true },
  );

  async function findActive(tokenHash: string): Promise<ActiveToken | undefined> {
    const version = await repository.dataVersion();
    if (version === undefined) return repository.findActiveByHash(tokenHash);
    if (version !== cachedAtVersion) {
      forget();
      cachedAtVersion = version;
    }
    const cached = valid.get(tokenHash);
    if (cached) return cached;
    const clearsBefore = clears;
    const row = await repository.findActiveByHash(tokenHash);
    if (row && clears === clearsBefore) {
      if (valid.size >= MAX_CACHED_TOKENS) valid.delete(valid.keys().next().value!);
      valid.set(tokenHash, row);
    }
    return row;
  }

  /**
   * A token of `role` (an old scope is accepted: `write` is owner, `read` viewer) for `userId`
   * (none: an operator token). Never above the user's current role.
   */
  async function create(
    name: string,
    roleOrScope: Role | TokenScope = 'viewer',
    { userId = null, expiresAt = null, tags: rawTags = null }: TokenOptions = {},
  ): Promise<{ token: string; summary: TokenSummary }> {
    // A name is shown in logs, terminals (`token list`) and pages: no line breaks, escapes or direction overrides.
    if (hasControlCharacters(name))
      throw tokenProblems.nameInvalid.create('a token name must not contain control characters');
    const role = isRole(roleOrScope) ? roleOrScope : roleOfScope(roleOrScope);
    let tags: string[] | null = null;
    if (rawTags !== null) {
      const normal = normaliseScopeTags(rawTags);
      if (!Array.isArray(normal)) throw tokenProblems.tagsInvalid.create(normal.error);
      if (role === 'owner')
        throw tokenProblems.tagsInvalid.create(
          'an owner token sees every site: give it a lower role to limit it to tags',
        );
      tags = normal;
    }
    if (userId !== null) {
      const user = await repository.userOf(userId);
      if (!user) throw tokenProblems.userNotFound.create(`no user has the id ${userId}`);
      if (!roleAtLeast(user.role, role))
        throw tokenProblems.roleTooHigh.create(`the user is a ${user.role}: their token cannot be a ${role}`);
      const userScope = scopeOf(user.role, user.scopeTags);
      // No tags of its own: the token has its user's scope, whatever it is.
      if (tags !== null && !scopeWithin({ kind: 'tags', tags }, userScope))
        throw tokenProblems.scopeTooWide.create(
          userScope.kind === 'tags'
            ? `the user sees only sites tagged ${userScope.tags.join(', ') || '(none)'}: give the token some of those tags`
            : 'the token’s scope is wider than its user’s',
        );
    }
    const { token, tokenHash, prefix } = mintToken();
    const now = clock.now();
    const row = {
      id: createId('tok', now),
      name,
      role,
      scope: scopeOfRole(role),
      userId,
      tags,
      expiresAt,
      tokenHash,
      prefix,
      createdAt: now,
    };
    await repository.insert(row);
    events.emit('token.created', { tokenId: row.id, name, scope: row.scope, role, userId, tags });
    return { token, summary: toSummary({ ...row, lastUsedAt: null, revokedAt: null }) };
  }

  /** Revokes a token read active; `notFound` when it no longer is (revoked meanwhile, by another request or process). */
  async function revokeRow(row: ApiTokenRow, by: Access | null, notFound: () => Error): Promise<TokenSummary> {
    const revoked = await repository.revoke(row.id, clock.now());
    if (!revoked) throw notFound();
    forget();
    events.emit('token.revoked', { tokenId: row.id, name: row.name, userId: row.userId, by: by?.actor ?? null });
    return toSummary(revoked);
  }

  /** Whether `access` may see and revoke the token: an owner any; anyone else the tokens of their own user. */
  const mayManage = (access: Access, row: ApiTokenRow) =>
    access.role === 'owner' ||
    (access.userId !== null
      ? row.userId === access.userId
      : access.actor.kind === 'token' && row.id === access.actor.id);

  return {
    create,

    /**
     * A token made through the API or the dashboard: for the asker's own user unless an owner names
     * another; its role at most the asker's (and the user's, `create` checks).
     */
    async createFor(
      access: Access,
      {
        name,
        role,
        userId,
        expiresAt = null,
        tags = null,
      }: { name: string; role: Role; userId?: string; expiresAt?: Date | null; tags?: readonly string[] | null },
    ): Promise<{ token: string; summary: TokenSummary }> {
      const owner = userId ?? access.userId;
      if (owner !== access.userId && access.role !== 'owner')
        throw commonProblems.forbidden.create(`only an owner creates tokens for other users; you are a ${access.role}`);
      if (!roleAtLeast(access.role, role))
        throw tokenProblems.roleTooHigh.create(`you are a ${access.role}: you cannot create a ${role} token`);
      // A token made by a scoped principal (one of an operator token, which has no user) stays within its scope.
      if (access.sites.kind === 'tags' && tags === null) tags = access.sites.tags;
      if (tags !== null && access.sites.kind === 'tags') {
        const asked = normaliseScopeTags(tags);
        if (Array.isArray(asked) && !scopeWithin({ kind: 'tags', tags: asked }, access.sites))
          throw tokenProblems.scopeTooWide.create(
            `you see only sites tagged ${access.sites.tags.join(', ') || '(none)'}: give the token some of those tags`,
          );
      }
      return create(name, role, { userId: owner, expiresAt, tags });
    },

    /** Returns the token's identity and effective role, or null for an unknown, revoked or expired token. */
    async authenticate(token: string): Promise<AuthenticatedToken | null> {
      if (!token.startsWith(TOKEN_PREFIX)) return null;
      const found = await findActive(hashToken(token));
      if (!found) return null;
      const { token: row, userRole, userScopeTags } = found;
      const now = clock.now();
      if (row.expiresAt && row.expiresAt.getTime() <= now.getTime()) return null;
      if (userRole === 'missing') return null;
      if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
        // Written before the write is awaited, so that requests meanwhile do not write it again.
        row.lastUsedAt = now;
        await repository.markUsed(row.id, now);
      }
      const role = userRole === null ? row.role : lowerRole(row.role, userRole);
      // The token's own tags (none: its user's scope) within its user's scope; an owner sees every
      // site, a client only its tags (none: no site).
      const own: SiteScope = row.tags === null ? ALL_SITES : { kind: 'tags', tags: row.tags };
      const limited = userRole === null ? own : intersectScopes(own, scopeOf(userRole, parseTags(userScopeTags)));
      const sites: SiteScope =
        role === 'owner'
          ? ALL_SITES
          : role === 'client' && limited.kind === 'all'
            ? { kind: 'tags', tags: [] }
            : limited;
      return { id: row.id, name: row.name, scope: scopeOfRole(role), role, userId: row.userId, sites };
    },

    /** Every token (the CLI), or one user's (`null`: the operator tokens). */
    list: async (userId?: string | null): Promise<TokenSummary[]> => (await repository.list(userId)).map(toSummary),

    /** The tokens `access` may see: an owner's every token (or one user's), anyone else's their own user's. */
    async listFor(access: Access, userId?: string): Promise<TokenSummary[]> {
      if (access.role === 'owner') return (await repository.list(userId)).map(toSummary);
      return (await repository.list(access.userId))
        .filter((row) => mayManage(access, row) && (userId === undefined || row.userId === userId))
        .map(toSummary);
    },

    /** Revokes by id or name (the CLI, which holds the data directory). */
    async revoke(idOrName: string): Promise<TokenSummary> {
      const matches = await repository.findByIdOrName(idOrName);
      const notFound = () => tokenProblems.notFound.create(`no active token has the id or name ${idOrName}`);
      if (matches.length === 0) throw notFound();
      if (matches.length > 1)
        throw tokenProblems.ambiguous.create(
          `${matches.length} active tokens are named ${idOrName}; revoke one by its id`,
        );
      return revokeRow(matches[0]!, null, notFound);
    },

    /** Revokes by id for the API and the dashboard; a token `access` may not manage is `token-not-found`, like an unknown one. */
    async revokeFor(access: Access, id: string): Promise<TokenSummary> {
      const row = await repository.findById(id);
      const notFound = () => tokenProblems.notFound.create(`no active token of yours has the id ${id}`);
      if (!row || row.revokedAt !== null || !mayManage(access, row)) throw notFound();
      return revokeRow(row, access, notFound);
    },

    /**
     * On a first start there is no way to call the API; an admin token is written to a 0600
     * file in the data directory. Its path is logged, never the token.
     */
    async ensureBootstrapToken(dataDir: string): Promise<{ path: string } | null> {
      if ((await repository.countActive()) > 0) return null;
      const path = join(dataDir, BOOTSTRAP_TOKEN_FILE);
      // An operator token (no user: the first user is created after it) with the owner role.
      const { token, summary } = await create('admin', 'owner');
      const temporary = `${path}.tmp-${process.pid}`;
      writeFileSync(temporary, `${token}\n`, { mode: 0o600 });
      renameSync(temporary, path);
      events.emit(
        'token.bootstrap_created',
        { tokenId: summary.id, path },
        `no API token existed: an admin token was written to ${path}`,
      );
      return { path };
    },
  };
}

function toSummary(row: ApiTokenRow): TokenSummary {
  return {
    id: row.id,
    name: row.name,
    role: row.role,
    scope: scopeOfRole(row.role),
    userId: row.userId,
    tags: row.tags,
    prefix: row.prefix,
    createdAt: row.createdAt,
    lastUsedAt: row.lastUsedAt,
    expiresAt: row.expiresAt,
    revokedAt: row.revokedAt,
  };
}

export type TokensService = ReturnType<typeof createTokensService>;
