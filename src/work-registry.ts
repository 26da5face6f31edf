import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Scheduler } from './jobs/scheduler.js';
import type { Services } from './services.js';
import type { ShutdownRegistry } from './shared/shutdown.js';
import { logScheduledWorkOff, siteWorkTicks, type SiteWorkOwner } from './scheduled-work.js';

/** The kinds of work a worker process can be given (`sitewarden start --role worker --kinds …`). */
const workKinds = ['uptime', 'audits', 'backups', 'updates'] as const;
type WorkKind = (typeof workKinds)[number];

const processRoles = ['all', 'api', 'worker'] as const;

/** What one process runs: everything (`all`), the API, or a worker of some kinds. */
export type ProcessRole = { role: 'all' } | { role: 'api' } | { role: 'worker'; kinds: readonly WorkKind[] };

export const ALL_ROLE: ProcessRole = { role: 'all' };

/** How long deliveries in flight at a stop (`daemon.stopping` among them) may take to finish. */
const WEBHOOK_STOP_GRACE_MS = 2_000;

/** What a row of the registry gets to start, tick and stop its feature. */
export interface WorkContext {
  services: Services;
  config: Pick<Config, 'dataDir' | 'shutdownGraceMs' | 'scheduled'>;
  logger: Logger;
  /** What is left of the shutdown's one grace period (the steps share it). */
  graceLeft: () => number;
}

interface WorkTick {
  name: string;
  expression: string;
  run: () => void | Promise<void>;
  /** false: on its schedule only, never at start (see Scheduler.every). */
  atStart?: boolean;
  /** In a cluster, runs in every process of its kind rather than in the one that claims it (see Scheduler.every). */
  everyProcess?: boolean;
}

/** One feature's share of the daemon's work. */
export interface WorkEntry {
  /** The feature, and the name of its shutdown step. */
  name: string;
  /** The worker kinds it belongs to; `any`: every worker runs it. */
  kinds: readonly WorkKind[] | 'any';
  /** Whether the API role runs it. */
  api: boolean;
  /** The persisted job kinds whose pools it runs; a role without the row holds them (jobs stay queued). */
  jobKinds?: readonly string[];
  /** Its start-up: recovery of what the last process left, or starting a service. */
  start?: (work: WorkContext) => void | Promise<void>;
  /** Its scheduled ticks. */
  ticks?: (work: WorkContext) => WorkTick[];
  /** Its shutdown step; it keeps within `graceLeft()`. Steps run in reverse order of the table. */
  stop?: (work: WorkContext) => void | Promise<void>;
}

const siteTicks =
  (owner: SiteWorkOwner) =>
  ({ services, config }: WorkContext): WorkTick[] =>
    siteWorkTicks({ services, switches: config.scheduled }).filter((tick) => tick.owner === owner);

/**
 * The daemon's work, one row per feature, in start-up order (shutdown runs the `stop` steps in
 * reverse). main.ts iterates it: a process starts the rows its role selects (`selectWork`), each
 * row's `start`, then its shutdown step, then its ticks. Order matters: webhooks start first and
 * stop last, so events logged while recovering and stopping reach them; recoveries run before
 * any tick; the scheduler, the HTTP listeners and the data (lock, database) are main.ts's own.
 */
export const workRegistry: readonly WorkEntry[] = [
  { name: 'site http', kinds: 'any', api: true, stop: ({ services }) => services.http.close() },
  // Webhooks: in every process, since each delivers the events it emits itself (queued for the
  // webhooks that want them and sent at once); deliveries the last stop left pending are sent at start.
  {
    name: 'webhooks',
    kinds: 'any',
    api: true,
    start: ({ services }) => services.webhookDispatcher.start(),
    stop: ({ services, graceLeft }) => services.webhookDispatcher.stop(Math.min(WEBHOOK_STOP_GRACE_MS, graceLeft())),
  },
  // The bootstrap token and the dashboard's first user, `admin` (random password in a 0600 file).
  {
    name: 'bootstrap credentials',
    kinds: [],
    api: true,
    start: async ({ services, config }) => {
      await services.tokens.ensureBootstrapToken(config.dataDir);
      await services.users.ensureBootstrapAdmin(config.dataDir);
    },
  },
  {
    name: 'site tasks',
    kinds: 'any',
    api: true,
    stop: async ({ services, config, logger, graceLeft }) => {
      const finished = await services.siteQueue.drain(graceLeft());
      if (!finished)
        logger.warn({ graceMs: config.shutdownGraceMs }, 'site tasks still running at shutdown were abandoned');
    },
  },
  // Site sync (the inventory the updates work from) and expiring authorizations: the updates worker's.
  {
    name: 'site sync',
    kinds: ['updates'],
    api: false,
    ticks: ({ services }) => [
      {
        name: 'site-sync',
        expression: '* * * * *',
        run: async () => {
          await services.sites.expireAuthorizations();
          await services.sync.enqueueDue();
        },
      },
    ],
  },
  // Uptime: probes are scheduled below; an hourly job closes hours, rolls days up and prunes by retention.
  {
    name: 'uptime monitor',
    kinds: ['uptime'],
    api: false,
    start: ({ services }) => services.uptime.start(),
    stop: ({ services }) => services.uptime.stop(),
    ticks: ({ services }) => [
      { name: 'uptime-maintenance', expression: '7 * * * *', run: async () => void (await services.uptime.maintain()) },
    ],
  },
  // Performance: queued audits left from the last run are queued again, running ones failed as
  // `interrupted` (their work files and partial reports are swept); reports expire hourly.
  {
    name: 'performance audits',
    kinds: ['audits'],
    api: false,
    jobKinds: ['audit'],
    start: async ({ services, logger }) => {
      await services.performance.recover();
      void services.performance
        .cleanupReports()
        .catch((error: unknown) => logger.warn({ err: error }, 'sweeping performance reports at start failed'));
    },
    stop: ({ services }) => services.performance.stop(),
    ticks: ({ services }) => [
      {
        name: 'performance-reports',
        expression: '23 * * * *',
        run: async () => void (await services.performance.cleanupReports()),
      },
    ],
  },
  // Backups: jobs the last process left queued are queued again, running ones fail as
  // `interrupted` (a backup is retried once). Shutdown aborts running backups at once.
  {
    name: 'backups',
    kinds: ['backups'],
    api: false,
    jobKinds: ['backup', 'restore', 'backup-verify', 'backup-repair', 'target-prune'],
    start: async ({ services }) => void (await services.backups.recoverInterrupted()),
    stop: async ({ services, config, logger, graceLeft }) => {
      if (!(await services.backups.stop(graceLeft())))
        logger.warn({ graceMs: config.shutdownGraceMs }, 'a restore still running at shutdown was aborted');
    },
  },
  // Bulk updates: one the last process left running fails as `interrupted` (its sites not started are
  // skipped); queued ones run. At a stop, running site updates get the grace period to finish.
  {
    name: 'bulk updates',
    kinds: ['updates'],
    api: false,
    jobKinds: ['bulk-update', 'site-update', 'safe-site-update'],
    start: ({ services }) => void services.bulkUpdates.recover(),
    stop: async ({ services, config, logger, graceLeft }) => {
      if (!(await services.bulkUpdates.stop(graceLeft())))
        logger.warn({ graceMs: config.shutdownGraceMs }, 'a site update still running at shutdown was abandoned');
    },
  },
  // Fleet actions: one the last process left running fails as `interrupted` (its sites not reached are
  // skipped); queued ones run. At a stop, no further site starts.
  {
    name: 'fleet actions',
    kinds: ['updates'],
    api: false,
    jobKinds: ['fleet-action'],
    start: ({ services }) => void services.fleetActions.recover(),
    stop: async ({ services, graceLeft }) => void (await services.fleetActions.stop(graceLeft())),
  },
  // Safe updates: one the last process left running is queued again and resumes where it was
  // (past the update: the after-checks, then keep or roll back), so no site is left broken unrecorded.
  {
    name: 'safe updates',
    kinds: ['updates'],
    api: false,
    jobKinds: ['safe-update'],
    start: ({ services }) => void services.safeUpdates.recover(),
    stop: async ({ services, graceLeft }) => void (await services.safeUpdates.stop(graceLeft())),
  },
  // The ticks that start work on the sites without being asked (src/scheduled-work.ts), each with its kind.
  { name: 'scheduled uptime probes', kinds: ['uptime'], api: false, ticks: siteTicks('uptime') },
  { name: 'scheduled audits', kinds: ['audits'], api: false, ticks: siteTicks('audits') },
  { name: 'scheduled backups', kinds: ['backups'], api: false, ticks: siteTicks('backups') },
  { name: 'update policies', kinds: ['updates'], api: false, ticks: siteTicks('updates') },
  { name: 'audit log retention', kinds: [], api: true, ticks: siteTicks('api') },
  {
    name: 'scheduled work switches',
    kinds: ['uptime', 'audits', 'backups'],
    api: false,
    start: ({ config, logger }) => logScheduledWorkOff(config.scheduled, logger),
  },
  // Offsite targets: a daily prune of each, as a job (target.pruned), removes what no remaining backup there references (docs/offsite.md).
  // On its schedule only, never at start: it holds the store lock, which holds backups off, and a restart loop would prune in a loop.
  {
    name: 'offsite prune',
    kinds: ['backups'],
    api: false,
    ticks: ({ services }) =>
      services.backups.targets.names.length > 0
        ? [
            {
              name: 'offsite-prune',
              expression: '37 3 * * *',
              run: async () => {
                for (const target of services.backups.targets.names)
                  await services.backups.targets.requestPrune(target);
              },
              atStart: false,
            },
          ]
        : [],
  },
  // Webhooks: a tick a second starts retries that fell due; finished deliveries expire hourly. The API
  // process's, like the deliveries' routes (a worker's failed deliveries are retried there).
  {
    name: 'webhook retries',
    kinds: [],
    api: true,
    ticks: ({ services }) => [
      { name: 'webhook-retries', expression: '* * * * * *', run: () => services.webhookDispatcher.tick() },
      {
        name: 'webhook-retention',
        expression: '41 * * * *',
        run: async () => void (await services.webhookDispatcher.prune()),
      },
    ],
  },
  {
    name: 'dashboard sessions',
    kinds: [],
    api: true,
    ticks: ({ services }) => [
      {
        name: 'dashboard-sessions',
        expression: '29 * * * *',
        run: async () => {
          await services.users.pruneSessions();
        },
      },
    ],
  },
];

/** The rows a role runs: `all` every one; `api` those the API needs; a worker those of its kinds and those every worker runs. */
export function selectWork(role: ProcessRole, registry: readonly WorkEntry[] = workRegistry): WorkEntry[] {
  return registry.filter((entry) => {
    if (role.role === 'all') return true;
    if (role.role === 'api') return entry.api;
    return entry.kinds === 'any' || entry.kinds.some((kind) => role.kinds.includes(kind));
  });
}

/** The persisted job kinds a role runs: in a cluster, the queue's jobs this process takes (`jobs.work`). */
export function workedJobKindsOf(role: ProcessRole, registry: readonly WorkEntry[] = workRegistry): string[] {
  return selectWork(role, registry).flatMap((entry) => entry.jobKinds ?? []);
}

/** The job kinds of the rows a role does not run: their pools are held, so what is submitted stays queued. */
export function heldJobKindsOf(role: ProcessRole, registry: readonly WorkEntry[] = workRegistry): string[] {
  const selected = new Set(selectWork(role, registry));
  return registry.filter((entry) => !selected.has(entry)).flatMap((entry) => entry.jobKinds ?? []);
}

/**
 * Starts a role's work in the table's order: each row's start-up (awaited), its shutdown step, its
 * ticks. The scheduler is neither run nor stopped here: main.ts does both once every row is in.
 */
export async function startWork({
  role,
  work,
  scheduler,
  shutdown,
  registry = workRegistry,
}: {
  role: ProcessRole;
  work: WorkContext;
  scheduler: Pick<Scheduler, 'every'>;
  shutdown: Pick<ShutdownRegistry, 'register'>;
  registry?: readonly WorkEntry[];
}): Promise<void> {
  for (const entry of selectWork(role, registry)) {
    await entry.start?.(work);
    const stop = entry.stop;
    if (stop) shutdown.register(entry.name, () => stop(work));
    for (const tick of entry.ticks?.(work) ?? [])
      scheduler.every(tick.name, tick.expression, tick.run, {
        ...(tick.atStart === false && { atStart: false }),
        ...(tick.everyProcess && { everyProcess: true }),
      });
  }
}

/** Parses `--role` and `--kinds`; a message naming the flag for a bad value. */
export function parseProcessRole(role: string | undefined, kinds: string | undefined): ProcessRole | { error: string } {
  const name = role ?? 'all';
  if (!(processRoles as readonly string[]).includes(name))
    return { error: `--role must be one of ${processRoles.join(', ')} (not "${name}")` };
  if (kinds !== undefined && name !== 'worker') return { error: '--kinds goes only with --role worker' };
  if (name === 'all') return ALL_ROLE;
  if (name === 'api') return { role: 'api' };
  if (kinds === undefined) return { role: 'worker', kinds: workKinds };
  const given = kinds.split(',').map((kind) => kind.trim());
  const unknown = given.find((kind) => !(workKinds as readonly string[]).includes(kind));
  if (unknown !== undefined) return { error: `--kinds takes ${workKinds.join(', ')} (not "${unknown}")` };
  return { role: 'worker', kinds: [...new Set(given)] as WorkKind[] };
}

/** A role as a short label for logs and events: `all`, `api`, `worker (backups, updates)`. */
export function describeRole(role: ProcessRole): string {
  return role.role === 'worker' ? `worker (${role.kinds.join(', ')})` : role.role;
}
