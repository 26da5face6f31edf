import type { StateDatabase } from '../db/state-db.js';
import { systemClock } from '../shared/clock.js';
import { createLoggedEvents, createLogger } from '../shared/logger.js';
import { isRole, roles } from '../shared/actor.js';
import { randomPassword } from './passwords.js';
import { usersProblems } from './users.errors.js';
import { createTwoFactorRepository } from './two-factor.repository.js';
import { createUsersRepository } from './users.repository.js';
import { createUsersService } from './users.service.js';

/**
 * `sitewarden users create NAME [--role ROLE] | set-role NAME ROLE | set-scope NAME --tags a,b|--all | reset-password NAME | reset-two-factor NAME | list`: dashboard accounts from the
 * command line. A new password is random and printed once on stdout (the command's result, never
 * a log line). Like the token commands it may run beside the daemon.
 */
export async function usersCommand({
  args,
  open,
  out,
}: {
  args: string[];
  /** The state to act on (cli.ts: the data directory's SQLite database, or the cluster's PostgreSQL); closed after. */
  open: () => Promise<StateDatabase>;
  out: (line: string) => void;
}): Promise<number> {
  const [action, name, ...rest] = args;
  const state = await open();
  try {
    const users = createUsersService({
      repository: createUsersRepository(state),
      clock: systemClock,
      events: createLoggedEvents(createLogger({ level: 'silent' })),
      // Resetting two-factor needs no secret: it forgets the sealed one.
      twoFactorRepository: createTwoFactorRepository(state),
    });
    switch (action) {
      case 'create': {
        if (!name) return usage(out);
        const role = rest[0] === '--role' ? rest[1] : rest[0]?.startsWith('--role=') ? rest[0].slice(7) : 'owner';
        if (!isRole(role) || (rest.length > 0 && !rest[0]!.startsWith('--role'))) return usage(out);
        const password = randomPassword();
        const user = await users.create(name, password, role);
        out(`user ${user.username} (${user.role}) created; password (shown once):`);
        out(password);
        return 0;
      }
      case 'set-role': {
        const role = rest[0];
        if (!name || !isRole(role)) return usage(out);
        const user = (await users.list()).find((candidate) => candidate.username === name.trim().toLowerCase());
        if (!user) throw usersProblems.notFound.create(`no user is named ${name}`);
        await users.setRole(user.id, role);
        out(`${user.username} is now a ${role} (their sessions ended)`);
        return 0;
      }
      case 'set-scope': {
        // `--tags a,b` limits the user to the sites carrying any of them; `--all` (or `--tags ''`) lifts the limit.
        const flag = rest[0];
        if (!name || (flag !== '--tags' && flag !== '--all') || (flag === '--tags' && rest[1] === undefined))
          return usage(out);
        const user = (await users.list()).find((candidate) => candidate.username === name.trim().toLowerCase());
        if (!user) throw usersProblems.notFound.create(`no user is named ${name}`);
        const tags =
          flag === '--all'
            ? []
            : rest[1]!
                .split(',')
                .map((tag) => tag.trim())
                .filter((tag) => tag !== '');
        const changed = await users.setScope(user.id, tags.length === 0 ? null : tags);
        out(
          `${changed.username} now sees ${changed.scopeTags === null ? 'every site' : `the sites tagged ${changed.scopeTags.join(', ')}`} (their sessions ended)`,
        );
        return 0;
      }
      case 'reset-password': {
        if (!name) return usage(out);
        const password = await users.resetPassword(name);
        out(`new password of ${name.toLowerCase()} (shown once; their sessions ended):`);
        out(password);
        return 0;
      }
      case 'reset-two-factor': {
        // The way back in for someone who lost their authenticator and their recovery codes (an owner included).
        if (!name) return usage(out);
        const user = (await users.list()).find((candidate) => candidate.username === name.trim().toLowerCase());
        if (!user) throw usersProblems.notFound.create(`no user is named ${name}`);
        await users.twoFactor.reset(user.id, null);
        out(`two-factor of ${user.username} is off; they sign in with their password and may set it up again`);
        return 0;
      }
      case 'list':
        for (const user of await users.list())
          out(
            `${user.id}\t${user.username}\t${user.role}\t${user.scopeTags === null ? 'all' : user.scopeTags.join(',') || '-'}\t${user.lastSignedInAt?.toISOString() ?? '-'}`,
          );
        return 0;
      default:
        return usage(out);
    }
  } finally {
    await state.close();
  }
}

function usage(out: (line: string) => void): number {
  out(
    `users needs: create NAME [--role ${roles.join('|')}] | set-role NAME ROLE | set-scope NAME --tags a,b|--all | reset-password NAME | reset-two-factor NAME | list`,
  );
  return 2;
}
