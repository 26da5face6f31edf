#!/usr/bin/env node
import { openStateDatabase, sqliteStateOf, StateDatabaseUnavailableError, type StateDatabase } from './db/state-db.js';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from './config.js';
import { ImportBlobsError, ImportMismatchError, ImportRefusedError, importDataDir } from './cluster-import.js';
import { MigrationsPendingError, openDatabase } from './db/database.js';
import { DATABASE_FILE, RoleNeedsClusterError, startDaemon } from './main.js';
import { parseProcessRole, type ProcessRole } from './work-registry.js';
import { limitHeapGrowth } from './shared/heap-growth.js';
import { systemClock } from './shared/clock.js';
import { isAppError } from './shared/errors.js';
import { createLoggedEvents, createLogger } from './shared/logger.js';
import { KeyError } from './shared/secret-key.js';
import { DataDirLockedError, lockDataDir, withDataDirShared } from './shared/data-dir-lock.js';
import { tokenCommand } from './tokens/tokens.cli.js';
import { VERSION } from './version.js';
import {
  listTargetSnapshotsCommand,
  localBackupObjects,
  rekeyTargetCommand,
  verifyBackupCommand,
} from './backups/backups.cli.js';
import { createServices } from './services.js';
import { loadSecretKey } from './shared/secret-key.js';
import { usersCommand } from './users/users.cli.js';
import { createUsersRepository } from './users/index.js';

const USAGE = `Usage: sitewarden <command>

Commands:
  start [--role all|api|worker] [--kinds uptime,audits,backups,updates]
                                         run the daemon (configured by SITEWARDEN_* environment variables);
                                         --role all (the default) runs everything; api serves the API and
                                         dashboard only, worker runs the work of its --kinds (all by default)
                                         with only /healthz and /readyz; api and worker need cluster mode
  migrate                                apply database migrations and exit
  cluster import --from DATA_DIR         move a single machine's data directory into the cluster (SITEWARDEN_DATABASE_URL,
                                         SITEWARDEN_SECRET_KEY: the single machine's key, SITEWARDEN_BLOB_*): its database
                                         copied into the cluster's empty database in one transaction and verified table by
                                         table, its backups, audit reports and screenshots into the blob store and read
                                         back there, before the database commits (exit 1 on any failure, no row kept);
                                         its daemon stopped first
  token create --name NAME [--role viewer|manager|owner] [--user NAME] [--expires-in-days N]
                                         create an API token and print it once (role defaults to viewer;
                                         --scope read|write still works: write is owner, read viewer);
                                         with --user it belongs to that user and never exceeds their role,
                                         without it is an operator token
  token list                             list API tokens with their role and user (never the tokens themselves)
  token revoke ID|NAME                   revoke a token
  backup verify BACKUP_ID [--target NAME] [--sample PERCENT]
                                         re-read a backup's objects (from the local store or an offsite
                                         target, all or a random sample) and check every hash (exit 1 if any fails)
  recover list --target NAME             list the backups an offsite target holds (its configuration and
                                         passphrase are all it needs)
  recover rekey --target NAME --new-passphrase-file PATH
                                         rewrap the target's repository key under a new passphrase
  recover restore --target NAME --site SITE_ID BACKUP_ID
                                         restore a backup the target holds into a connected site, with the
                                         daemon stopped; prints the restore's outcome
  users create NAME [--role ROLE]        create a dashboard user (owner unless --role owner|manager|viewer|client)
                                         and print its random password once
  users set-role NAME ROLE               give a user another role (ends their sessions)
  users set-scope NAME --tags a,b|--all  limit a user to the sites carrying any of the tags (ends their sessions)
  users reset-password NAME              set a new random password (printed once) and end the user's sessions
  users reset-two-factor NAME            turn a user's two-factor off (a lost phone); they may set it up again
  users list                             list dashboard users
  version                                print the version`;

class UsageError extends Error {}
/** A bad flag value: one line naming the flag, exit code 2. */
class FlagError extends Error {}

/**
 * The operator commands that work on one data directory (its backup store, its lock); in cluster mode the state is
 * not there, and they say so rather than act on an empty local database (docs/cluster.md).
 */
function singleMachine(config: Config, command: string): Config {
  if (config.databaseUrl)
    throw new ConfigError(
      `\`${command}\` works on one machine's data directory; in cluster mode (SITEWARDEN_DATABASE_URL) use the API or the dashboard`,
    );
  return config;
}

async function main(argv: string[]): Promise<number> {
  // Everything this process creates in the data directory is owner-only, SQLite's -wal and -shm
  // and the audit worker's files included (a child inherits the umask).
  process.umask(0o077);
  const [command, ...rest] = argv;
  switch (command) {
    case 'start': {
      // The flags first: a bad one is named before the environment is read.
      const role = startRole(rest);
      return start(loadConfig(), role);
    }
    case 'migrate': {
      const config = loadConfig();
      if (config.databaseUrl) {
        // The cluster's database: its migrations applied under an advisory lock (a process starting at once waits).
        await (await openStateDatabase({ url: config.databaseUrl, sqlitePath: '' })).close();
        process.stdout.write('migrations applied to the cluster’s PostgreSQL database\n');
        return 0;
      }
      // Never under a running daemon: its statements were prepared against the schema it migrated.
      const lock = lockDataDir(config.dataDir);
      try {
        openDatabase(join(config.dataDir, DATABASE_FILE)).close();
      } finally {
        lock.release();
      }
      process.stdout.write(`migrations applied to ${join(config.dataDir, DATABASE_FILE)}\n`);
      return 0;
    }
    case 'cluster':
      return clusterCommand(rest, loadConfig());
    case 'backup': {
      if (rest[0] !== 'verify') throw new UsageError('backup needs: verify BACKUP_ID');
      const { values, positionals } = parseArgs({
        args: rest.slice(1),
        allowPositionals: true,
        options: { target: { type: 'string' }, sample: { type: 'string' } },
      });
      const backupId = positionals[0];
      if (!backupId) throw new UsageError('backup verify needs a BACKUP_ID');
      const sample = values.sample === undefined ? undefined : Number(values.sample);
      if (sample !== undefined && !(sample > 0 && sample <= 100))
        throw new UsageError('--sample must be a percentage above 0, at most 100');
      const config = loadConfig();
      // Reads only: it may run beside the daemon, or beside the cluster's processes.
      return onCommandState(config, (open) =>
        verifyBackupCommand({
          open,
          local: () => localBackupObjects({ ...config, secretKey: () => loadSecretKey(config) }),
          backupId,
          target: values.target,
          sample,
          offsite: config.backups.offsite,
          out: (line) => process.stdout.write(`${line}\n`),
        }),
      );
    }
    case 'recover':
      return recover(rest, loadConfig());
    case 'token': {
      // Token commands may run beside the daemon (README, "Operator commands"): each is one short
      // write transaction, which SQLite's WAL serialises with the daemon's writes (both wait up to
      // busy_timeout for the other), and the daemon notices a revoke through data_version. Beside a
      // daemon they leave migrations to it; alone they hold the lock, so no daemon starts mid-command.
      // In cluster mode they act on the cluster's database, beside its processes.
      const config = loadConfig();
      return onCommandState(config, (open) => tokenCommand({ args: rest, open, UsageError, userIdByName }));
    }
    case 'users': {
      // Like the token commands: one short write, safe beside the daemon.
      const config = loadConfig();
      return onCommandState(config, (open) =>
        usersCommand({ args: rest, open, out: (line) => process.stdout.write(`${line}\n`) }),
      );
    }
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

/** `start`'s flags: `--role all|api|worker` and, with `--role worker`, `--kinds a,b,…`. */
function startRole(args: string[]): ProcessRole {
  let values: { role?: string; kinds?: string };
  try {
    ({ values } = parseArgs({ args, options: { role: { type: 'string' }, kinds: { type: 'string' } } }));
  } catch (error) {
    throw new FlagError((error as Error).message.split('\n')[0]);
  }
  const role = parseProcessRole(values.role, values.kinds);
  if ('error' in role) throw new FlagError(role.error);
  return role;
}

async function start(config: Config, role: ProcessRole): Promise<number> {
  limitHeapGrowth();
  const logger = createLogger({ level: config.logLevel });
  // Listen for signals before starting, so one that arrives during start-up still stops cleanly.
  const signalled = new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  const daemon = await startDaemon(config, logger, { role });
  const signal = await signalled;
  daemon.events.emit('daemon.stopping', { signal });
  await daemon.shutdown();
  return 0;
}

/** `cluster import --from DATA_DIR`: a single machine's data directory moved into the cluster's database. */
async function clusterCommand(args: string[], config: Config): Promise<number> {
  if (args[0] !== 'import') throw new UsageError('cluster needs: import --from DATA_DIR');
  let from: string | undefined;
  try {
    ({
      values: { from },
    } = parseArgs({ args: args.slice(1), options: { from: { type: 'string' } } }));
  } catch (error) {
    throw new UsageError((error as Error).message.split('\n')[0]!);
  }
  if (!from) throw new UsageError('cluster import needs --from DATA_DIR');
  // loadConfig asks a cluster for its blob store, so one comes with the database.
  if (!config.databaseUrl || !config.blobStore)
    throw new ConfigError(
      '`cluster import` moves a data directory into a cluster: set SITEWARDEN_DATABASE_URL, SITEWARDEN_SECRET_KEY and the blob store (SITEWARDEN_BLOB_*)',
    );
  return importDataDir({
    from: resolve(from),
    databaseUrl: config.databaseUrl,
    secretKey: loadSecretKey(config),
    blobStore: config.blobStore,
    out: (line) => process.stdout.write(`${line}\n`),
  });
}

/**
 * Disaster recovery from an offsite target: `list` reads the bucket only; `restore` runs the
 * restore job here, the daemon stopped (it takes the data directory like the daemon does).
 */
async function recover(args: string[], config: Config): Promise<number> {
  const [action, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { target: { type: 'string' }, site: { type: 'string' }, 'new-passphrase-file': { type: 'string' } },
  });
  if (!values.target) throw new UsageError(`recover ${action ?? ''} needs --target NAME`);
  const out = (line: string) => process.stdout.write(`${line}\n`);
  if (action === 'list')
    return listTargetSnapshotsCommand({ target: values.target, offsite: config.backups.offsite, out });
  // Listing reads the target alone; rekeying and restoring act beside one machine's daemon, stopped.
  if (action === 'rekey' || action === 'restore') singleMachine(config, `recover ${action}`);
  if (action === 'rekey') {
    const file = values['new-passphrase-file'];
    if (!file) throw new UsageError('recover rekey needs --new-passphrase-file PATH');
    const newPassphrase = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    // The daemon stopped: it would keep the old key file's passphrase until restarted with the new one.
    const lock = lockDataDir(config.dataDir);
    try {
      return await rekeyTargetCommand({ target: values.target, offsite: config.backups.offsite, newPassphrase, out });
    } finally {
      lock.release();
    }
  }
  if (action !== 'restore')
    throw new UsageError(`unknown recover action "${action ?? ''}"; use list, restore or rekey`);
  const backupId = positionals[0];
  if (!values.site || !backupId) throw new UsageError('recover restore needs --site SITE_ID and a BACKUP_ID');
  const lock = lockDataDir(config.dataDir);
  const database = openDatabase(join(config.dataDir, DATABASE_FILE));
  const logger = createLogger({ level: 'warn' });
  const services = createServices({
    config,
    state: sqliteStateOf(database),
    logger,
    events: createLoggedEvents(logger),
    clock: systemClock,
    secretKey: loadSecretKey(config),
  });
  try {
    const queued = await services.backups.targets.restore(values.target, backupId, values.site);
    await services.backups.idle();
    const restore = await services.backups.getRestore(values.site, queued.id);
    out(
      `${restore.status}: restore ${restore.id} of backup ${backupId} from ${values.target} into site ${values.site}` +
        (restore.status === 'completed'
          ? ` (${restore.filesRestored} files, ${restore.tablesRestored} tables)`
          : `: ${restore.reason ?? ''} ${restore.error ?? ''}`),
    );
    return restore.status === 'completed' ? 0 : 1;
  } finally {
    await services.http.close();
    database.close();
    lock.release();
  }
}

/**
 * Runs an operator command (`token`, `users`) on the state it acts on: the cluster's database, beside its processes;
 * else the data directory's SQLite database, its lock held shared (migrated only when no daemon runs on it).
 */
function onCommandState(
  config: Config,
  command: (open: () => Promise<StateDatabase>) => Promise<number>,
): Promise<number> {
  const url = config.databaseUrl;
  if (url) return command(() => openStateDatabase({ url, sqlitePath: '' }));
  return withDataDirShared(config.dataDir, (holder) =>
    command(async () => sqliteStateOf(openDatabase(join(config.dataDir, DATABASE_FILE), { migrate: holder.owner }))),
  );
}

/** The id of the user named NAME, for `token create --user`. */
async function userIdByName(state: StateDatabase, name: string): Promise<string> {
  const user = await createUsersRepository(state).findByUsername(name.trim().toLowerCase());
  if (!user) throw new UsageError(`no user is named ${name}`);
  return user.id;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    // Expected failures are one clear line; anything else keeps its stack for a bug report.
    if (
      error instanceof ConfigError ||
      error instanceof KeyError ||
      error instanceof MigrationsPendingError ||
      error instanceof StateDatabaseUnavailableError ||
      error instanceof ImportRefusedError ||
      error instanceof ImportMismatchError ||
      error instanceof ImportBlobsError
    )
      console.error(`sitewarden: ${error.message}`);
    else if (error instanceof DataDirLockedError)
      console.error(`sitewarden: ${error.message}; stop it first (one process per data directory)`);
    else if (error instanceof UsageError) console.error(`sitewarden: ${error.message}\n\n${USAGE}`);
    else if (error instanceof FlagError || error instanceof RoleNeedsClusterError) {
      console.error(`sitewarden: ${error.message}`);
      process.exit(2);
    } else if (isAppError(error)) console.error(`sitewarden: ${error.detail}`);
    else if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE')
      console.error(`sitewarden: cannot listen: ${(error as Error).message}`);
    else if ((error as NodeJS.ErrnoException).code === 'EACCES' || (error as NodeJS.ErrnoException).code === 'EROFS')
      console.error(`sitewarden: ${(error as Error).message}`);
    else console.error(error);
    process.exit(1);
  },
);
