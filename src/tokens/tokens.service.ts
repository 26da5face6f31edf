import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import type { AuthenticatedToken } from '../http/auth.js';
import { hasControlCharacters } from '../http/plain-text.js';
import type { Clock } from '../shared/clock.js';
import { defineProblem } from '../shared/errors.js';
import { createId } from '../shared/ids.js';
import type { TokensRepository } from './tokens.repository.js';
import type { ApiTokenRow } from './tokens.table.js';
import type { Events } from '../shared/event-bus.js';

export type TokenScope = AuthenticatedToken['scope'];

const tokenProblems = {
  notFound: defineProblem('token-not-found', 404, 'No such API token'),
  ambiguous: defineProblem('token-ambiguous', 409, 'More than one token has that name'),
  nameInvalid: defineProblem('token-name-invalid', 400, 'The token name is not acceptable'),
};

export interface TokenSummary {
  id: string;
  name: string;
  scope: TokenScope;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

const BOOTSTRAP_TOKEN_FILE = 'admin-token';
const TOKEN_PREFIX = 'swt_';
/** last_used_at is refreshed at most this often, so authentication does not write on every request. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** Valid tokens remembered (by hash) so a request authenticates without a query. */
const MAX_CACHED_TOKENS = 256;

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

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
  // CLI's `token revoke`) wrote to the database, which SQLite's data_version tells for free.
  const valid = new Map<string, ApiTokenRow>();
  let cachedAtVersion = -1;

  function findActive(tokenHash: string): ApiTokenRow | undefined {
    const version = repository.dataVersion();
    if (version !== cachedAtVersion) {
      valid.clear();
      cachedAtVersion = version;
    }
    const cached = valid.get(tokenHash);
    if (cached) return cached;
    const row = repository.findActiveByHash(tokenHash);
    if (row) {
      if (valid.size >= MAX_CACHED_TOKENS) valid.delete(valid.keys().next().value!);
      valid.set(tokenHash, row);
    }
    return row;
  }

  function create(name: string, scope: TokenScope): { token: string; summary: TokenSummary } {
    // A name is shown in logs, terminals (`token list`) and pages: no line breaks, escapes or direction overrides.
    if (hasControlCharacters(name))
      throw tokenProblems.nameInvalid.create('a token name must not contain control characters');
    const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
    const now = clock.now();
    const row = {
      id: createId('tok', now),
      name,
      scope,
      tokenHash: hashToken(token),
      prefix: token.slice(0, TOKEN_PREFIX.length + 6),
      createdAt: now,
    };
    repository.insert(row);
    events.emit('token.created', { tokenId: row.id, name, scope });
    return { token, summary: toSummary({ ...row, lastUsedAt: null, revokedAt: null }) };
  }

  return {
    create,

    /** Returns the token's identity, or null for an unknown or revoked token. */
    authenticate(token: string): AuthenticatedToken | null {
      if (!token.startsWith(TOKEN_PREFIX)) return null;
      const row = findActive(hashToken(token));
      if (!row) return null;
      const now = clock.now();
      if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
        repository.markUsed(row.id, now);
        row.lastUsedAt = now;
      }
      return { id: row.id, name: row.name, scope: row.scope };
    },

    list: (): TokenSummary[] => repository.list().map(toSummary),

    revoke(idOrName: string): TokenSummary {
      const matches = repository.findByIdOrName(idOrName);
      if (matches.length === 0) throw tokenProblems.notFound.create(`no active token has the id or name ${idOrName}`);
      if (matches.length > 1)
        throw tokenProblems.ambiguous.create(
          `${matches.length} active tokens are named ${idOrName}; revoke one by its id`,
        );
      const row = matches[0]!;
      const now = clock.now();
      repository.revoke(row.id, now);
      valid.clear();
      events.emit('token.revoked', { tokenId: row.id, name: row.name });
      return toSummary({ ...row, revokedAt: now });
    },

    /**
     * On a first start there is no way to call the API; an admin token is written to a 0600
     * file in the data directory. Its path is logged, never the token.
     */
    ensureBootstrapToken(dataDir: string): { path: string } | null {
      if (repository.countActive() > 0) return null;
      const path = join(dataDir, BOOTSTRAP_TOKEN_FILE);
      const { token, summary } = create('admin', 'write');
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
    scope: row.scope,
    prefix: row.prefix,
    createdAt: row.createdAt,
    lastUsedAt: row.lastUsedAt,
    revokedAt: row.revokedAt,
  };
}

export type TokensService = ReturnType<typeof createTokensService>;
