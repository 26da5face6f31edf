import { join } from 'node:path';
import { openDatabase } from '../db/database.js';
import { systemClock } from '../shared/clock.js';
import { createLoggedEvents, createLogger } from '../shared/logger.js';
import { randomPassword } from './passwords.js';
import { createUsersRepository } from './users.repository.js';
import { createUsersService } from './users.service.js';

/**
 * `sitewarden users create NAME | reset-password NAME | list`: dashboard accounts from the
 * command line. A new password is random and printed once on stdout (the command's result, never
 * a log line). Like the token commands it may run beside the daemon.
 */
export async function usersCommand({
  args,
  dataDir,
  databaseFile,
  migrate = true,
  out,
}: {
  args: string[];
  dataDir: string;
  databaseFile: string;
  migrate?: boolean;
  out: (line: string) => void;
}): Promise<number> {
  const [action, name] = args;
  const database = openDatabase(join(dataDir, databaseFile), { migrate });
  try {
    const users = createUsersService({
      repository: createUsersRepository({ db: database.db }),
      clock: systemClock,
      events: createLoggedEvents(createLogger({ level: 'silent' })),
    });
    switch (action) {
      case 'create': {
        if (!name) return usage(out);
        const password = randomPassword();
        const user = await users.create(name, password);
        out(`user ${user.username} (${user.role}) created; password (shown once):`);
        out(password);
        return 0;
      }
      case 'reset-password': {
        if (!name) return usage(out);
        const password = await users.resetPassword(name);
        out(`new password of ${name.toLowerCase()} (shown once; their sessions ended):`);
        out(password);
        return 0;
      }
      case 'list':
        for (const user of users.list())
          out(`${user.id}\t${user.username}\t${user.role}\t${user.lastSignedInAt?.toISOString() ?? '-'}`);
        return 0;
      default:
        return usage(out);
    }
  } finally {
    database.close();
  }
}

function usage(out: (line: string) => void): number {
  out('users needs: create NAME | reset-password NAME | list');
  return 2;
}
