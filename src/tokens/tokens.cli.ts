import { parseArgs } from 'node:util';
import type { StateDatabase } from '../db/state-db.js';
import { isRole, roles, type Role } from '../shared/actor.js';
import { systemClock } from '../shared/clock.js';
import { createLoggedEvents, createLogger } from '../shared/logger.js';
import { createTokensRepository } from './tokens.repository.js';
import { createTokensService, roleOfScope, type TokenScope } from './tokens.service.js';

/**
 * `sitewarden token create --name NAME [--role ROLE] [--user NAME] [--expires-in-days N] | list |
 * revoke ID|NAME`: API tokens from the command line. A new token is printed once on stdout (the
 * command's result, never a log line), what it is on stderr; the list shows each token's role,
 * user and dates, never the token itself. Like the users commands it may run beside the daemon.
 */
export async function tokenCommand({
  args,
  open,
  UsageError,
  userIdByName,
}: {
  args: string[];
  /** The state to act on (cli.ts: the data directory's SQLite database, or the cluster's PostgreSQL); closed after. */
  open: () => Promise<StateDatabase>;
  /** What a mistake in the command's arguments throws: the command line prints it with its usage (cli.ts). */
  UsageError: new (message: string) => Error;
  /** The id of the user named NAME, for `--user` (the users feature's, wired by cli.ts). */
  userIdByName: (state: StateDatabase, name: string) => Promise<string>;
}): Promise<number> {
  const [action, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      scope: { type: 'string' },
      role: { type: 'string' },
      user: { type: 'string' },
      'expires-in-days': { type: 'string' },
    },
  });
  const state = await open();
  try {
    // Operator commands log to stderr only at warn and above; their output is the result.
    const tokens = createTokensService({
      repository: createTokensRepository(state),
      clock: systemClock,
      events: createLoggedEvents(createLogger({ level: 'silent' })),
    });
    switch (action) {
      case 'create': {
        if (!values.name) throw new UsageError('token create needs --name NAME');
        if (values.scope !== undefined && values.scope !== 'read' && values.scope !== 'write')
          throw new UsageError('--scope must be read or write');
        if (values.role !== undefined && !isRole(values.role))
          throw new UsageError(`--role must be one of ${roles.join(', ')}`);
        if (values.role !== undefined && values.scope !== undefined)
          throw new UsageError('give --role or --scope (its deprecated alias), not both');
        const role: Role = values.role ?? (values.scope ? roleOfScope(values.scope as TokenScope) : 'viewer');
        const days = values['expires-in-days'];
        if (days !== undefined && !/^[1-9]\d{0,3}$/.test(days))
          throw new UsageError('--expires-in-days must be a whole number of days, 1 to 9999');
        const userId = values.user === undefined ? null : await userIdByName(state, values.user);
        const created = await tokens.create(values.name, role, {
          userId,
          expiresAt: days === undefined ? null : new Date(systemClock.now().getTime() + Number(days) * 86_400_000),
        });
        process.stdout.write(`${created.token}\n`);
        process.stderr.write(
          `created ${role} token ${created.summary.id} (${values.name})${values.user ? ` of ${values.user}` : ''}${days ? `, expiring in ${days} days` : ''}; it is shown only once\n`,
        );
        return 0;
      }
      case 'list': {
        const rows = await tokens.list();
        process.stdout.write(
          `${['ID', 'NAME', 'ROLE', 'SCOPE', 'USER', 'PREFIX', 'CREATED', 'LAST USED', 'EXPIRES', 'REVOKED'].join('\t')}\n`,
        );
        for (const row of rows) {
          process.stdout.write(
            `${[row.id, row.name, row.role, row.scope, row.userId ?? '-', `${row.prefix}…`, row.createdAt.toISOString(), row.lastUsedAt?.toISOString() ?? '-', row.expiresAt?.toISOString() ?? '-', row.revokedAt?.toISOString() ?? '-'].join('\t')}\n`,
          );
        }
        return 0;
      }
      case 'revoke': {
        const target = positionals[0];
        if (!target) throw new UsageError('token revoke needs a token id or name');
        const revoked = await tokens.revoke(target);
        process.stdout.write(`revoked ${revoked.id} (${revoked.name})\n`);
        return 0;
      }
      default:
        throw new UsageError(`unknown token action "${action ?? ''}"; use create, list or revoke`);
    }
  } finally {
    await state.close();
  }
}
