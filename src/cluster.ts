import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { joinClusterEvents, type FanoutEvent } from './db/event-fanout.js';
import type { StateDatabase } from './db/state-db.js';
import { createCancelRequests, type CancelRequests } from './jobs/cancel-requests.js';
import type { JobDispatchFactory } from './jobs/job-dispatch.js';
import { pgJobDispatch } from './jobs/pg-job-dispatch.js';
import type { TickClaim } from './jobs/scheduler.js';
import { createTickClaims } from './jobs/tick-claims.js';
import type { Clock } from './shared/clock.js';
import type { Events } from './shared/event-bus.js';

/** What one process of a cluster shares with the others, beyond the state database (docs/cluster.md). */
export interface ClusterProcess {
  /** This process, unique in the cluster: its events' origin, its tick claims, its uptime worker. */
  processId: string;
  /** The job runner's queue and the cancel requests that cross processes. */
  jobs: { dispatch: JobDispatchFactory; cancelRequests: CancelRequests };
  /** Cron with one leader: the first process to claim a tick's minute runs it. */
  claimTick: TickClaim;
  /** Joins the process's event bus to the cluster's (before any work: what it emits is published). */
  start(): Promise<void>;
  /** Leaves the cluster's events, after the work has stopped (its last events are published first). */
  stop(): Promise<void>;
}

/**
 * Cluster mode's parts of one process (issue 34), on the cluster's PostgreSQL database at `url`: the job queue
 * (pg-job-dispatch.ts), cancel requests across processes, events fanned out to every process, tick claims.
 * The composition (main.ts) makes one per process and gives its parts to the services and the scheduler.
 */
export function createClusterProcess({
  state,
  url,
  events,
  clock,
  logger,
}: {
  state: StateDatabase;
  url: string;
  events: Events;
  clock: Clock;
  logger: Logger;
}): ClusterProcess {
  const processId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const failed = (what: string) => (error: Error) => logger.error({ err: error }, what);
  // One fan-out per process: the bus's events, and the cancel requests it announces.
  let deliverCancel: (event: FanoutEvent) => boolean = () => false;
  const joined = joinClusterEvents({
    state,
    connectionString: url,
    origin: processId,
    clock,
    events,
    onError: failed('the cluster’s events failed'),
    intercept: (event) => deliverCancel(event),
  });
  const cancelRequests = createCancelRequests({
    state,
    clock,
    publish: (event) => joined.publish(event),
    onError: failed('a cancel request could not be read'),
  });
  deliverCancel = (event) => cancelRequests.deliver(event);
  return {
    processId,
    jobs: {
      dispatch: pgJobDispatch({ queue: { connectionString: url, onError: failed('the job queue failed') } }),
      cancelRequests,
    },
    claimTick: createTickClaims({ state, processId, clock }),
    start: () => joined.start(),
    stop: () => joined.stop(),
  };
}
