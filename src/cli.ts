#!/usr/bin/env node
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from './config.js';
import { openDatabase } from './db/database.js';
import { DATABASE_FILE, startDaemon } from './main.js';
import { systemClock } from './shared/clock.js';
import { isAppError } from './shared/errors.js';
import { logEvent } from './shared/events.js';
import { createLogger } from './shared/logger.js';
import { KeyError } from './shared/secret-key.js';
import { createTokensRepository } from './tokens/tokens.repository.js';
import { createTokensService, type TokenScope } from './tokens/tokens.service.js';
import { VERSION } from './version.js';
import { verifyBackupCommand } from './backups/backups.cli.js';

const USAGE = `Usage: sitewarden <command>

Commands:
  start                                  run the daemon (configured by SITEWARDEN_* environment variables)
  migrate                                apply database migrations and exit
  token create --name NAME [--scope read|write]
                                         create an API token and print it once (scope defaults to read)
  token list                             list API tokens (never the tokens themselves)
  token revoke ID|NAME                   revoke a token
  backup verify BACKUP_ID                re-read a backup's objects and check every hash (exit 1 if any fails)
  version                                print the version`;

class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'start':
      return start(loadConfig());
    case 'migrate': {
      const config = loadConfig();
      openDatabase(join(config.dataDir, DATABASE_FILE)).close();
      process.stdout.write(`migrations applied to ${join(config.dataDir, DATABASE_FILE)}\n`);
      return 0;
    }
    case 'backup': {
      if (rest[0] !== 'verify' || !rest[1]) throw new UsageError('backup needs: verify BACKUP_ID');
      const config = loadConfig();
      return verifyBackupCommand({ dataDir: config.dataDir, databaseFile: DATABASE_FILE, backupId: rest[1], out: (line) => process.stdout.write(`${line}\n`) });
    }
    case 'token':
      return token(rest, loadConfig());
    case 'version':
    case '--version':
      process.stdout.write(`${VERSION}\n`);
      return 0;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return 0;
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

async function start(config: Config): Promise<number> {
  const logger = createLogger({ level: config.logLevel });
  // Listen for signals before starting, so one that arrives during start-up still stops cleanly.
  const signalled = new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  const daemon = await startDaemon(config, logger);
  const signal = await signalled;
  logEvent(logger, 'daemon.stopping', { signal });
  await daemon.shutdown();
  return 0;
}

function token(args: string[], config: Config): number {
  const [action, ...rest] = args;
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { name: { type: 'string' }, scope: { type: 'string' } } });
  const database = openDatabase(join(config.dataDir, DATABASE_FILE));
  try {
    // Operator commands log to stderr only at warn and above; their output is the result.
    const tokens = createTokensService({ repository: createTokensRepository({ db: database.db }), clock: systemClock, logger: createLogger({ level: 'silent' }) });
    switch (action) {
      case 'create': {
        if (!values.name) throw new UsageError('token create needs --name NAME');
        const scope = (values.scope ?? 'read') as TokenScope;
        if (scope !== 'read' && scope !== 'write') throw new UsageError('--scope must be read or write');
        const created = tokens.create(values.name, scope);
        process.stdout.write(`${created.token}\n`);
        process.stderr.write(`created ${scope} token ${created.summary.id} (${values.name}); it is shown only once\n`);
        return 0;
      }
      case 'list': {
        const rows = tokens.list();
        process.stdout.write(`${['ID', 'NAME', 'SCOPE', 'PREFIX', 'CREATED', 'LAST USED', 'REVOKED'].join('\t')}\n`);
        for (const row of rows) {
          process.stdout.write(`${[row.id, row.name, row.scope, `${row.prefix}…`, row.createdAt.toISOString(), row.lastUsedAt?.toISOString() ?? '-', row.revokedAt?.toISOString() ?? '-'].join('\t')}\n`);
        }
        return 0;
      }
      case 'revoke': {
        const target = positionals[0];
        if (!target) throw new UsageError('token revoke needs a token id or name');
        const revoked = tokens.revoke(target);
        process.stdout.write(`revoked ${revoked.id} (${revoked.name})\n`);
        return 0;
      }
      default:
        throw new UsageError(`unknown token action "${action ?? ''}"; use create, list or revoke`);
    }
  } finally {
    database.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    // Expected failures are one clear line; anything else keeps its stack for a bug report.
    if (error instanceof ConfigError || error instanceof KeyError) console.error(`sitewarden: ${error.message}`);
    else if (error instanceof UsageError) console.error(`sitewarden: ${error.message}\n\n${USAGE}`);
    else if (isAppError(error)) console.error(`sitewarden: ${error.detail}`);
    else if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') console.error(`sitewarden: cannot listen: ${(error as Error).message}`);
    else if ((error as NodeJS.ErrnoException).code === 'EACCES' || (error as NodeJS.ErrnoException).code === 'EROFS') console.error(`sitewarden: ${(error as Error).message}`);
    else console.error(error);
    process.exit(1);
  },
);
