import { asc, gt, inArray, lt, sql, type SQL } from 'drizzle-orm';
import pg from 'pg';
import { z } from 'zod';
import type { Events, PublishedEvent } from '../shared/event-bus.js';
import type { Clock } from '../shared/clock.js';
import { clusterEvents } from './cluster-events.pg-table.js';
import type { StateDatabase } from './state-db.js';

/**
 * Events across the processes of a cluster (issue 34; docs/design/cluster-state.md, "Events across
 * processes"), on PostgreSQL. A process publishes each event it emits once: one statement writes it to
 * `cluster_events` and announces it with NOTIFY (sent when the statement commits), its JSON in the
 * notification when it fits, its id and origin otherwise (the other processes read it back; its emitter,
 * which showed it already, does not). Every other process LISTENs on a connection of its own
 * and hands each event, once, to `onEvent` (its live pages); its own events it has already delivered
 * itself. What the emitter alone must do once (write the audit log, queue webhook deliveries) stays
 * with the emitter's own subscribers: the fan-out only shows events elsewhere.
 *
 * A listening connection that drops is made again (after `reconnectMs`), and the events written while
 * it was away are read back from the table (from a little before it dropped; the ids seen lately keep
 * any from coming twice). The table keeps an hour of events; each process prunes it every few minutes.
 */
export const EVENTS_CHANNEL = 'sitewarden_events';

/** NOTIFY's payload must stay under 8,000 bytes; an event whose JSON is longer goes by its id. */
const PAYLOAD_LIMIT = 7_000;
/** How far before a lost connection the catch-up reads (commits land slightly out of id order). */
const CATCH_UP_OVERLAP_MS = 5_000;
/** How many recent ids a listener remembers, against an event coming both live and in a catch-up. */
const RECENT_IDS = 10_000;
const RETENTION_MS = 60 * 60_000;
const PRUNE_EVERY_MS = 5 * 60_000;

const Notified = z.union([
  z.object({
    id: z.number().int(),
    origin: z.string(),
    event: z.string(),
    level: z.enum(['info', 'warn', 'error']),
    fields: z.record(z.string(), z.unknown()),
    message: z.string().nullable(),
  }),
  z.object({ id: z.number().int(), origin: z.string() }).strict(),
]);

export interface FanoutEvent extends PublishedEvent {
  /** The process that emitted it. */
  origin: string;
}

export interface EventFanout {
  /** Writes the event and announces it to the other processes. */
  publish(event: PublishedEvent): Promise<void>;
  /** Starts listening; resolves once the LISTEN is in place. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function createEventFanout({
  state,
  connectionString,
  origin,
  clock,
  onEvent,
  onError,
  reconnectMs = 1_000,
}: {
  state: StateDatabase;
  /** The listening connection's (the pool's connections are shared and cannot hold a LISTEN). */
  connectionString: string;
  /** This process, unique in the cluster (its events are not handed back to it). */
  origin: string;
  clock: Clock;
  onEvent: (event: FanoutEvent) => void;
  /** A lost listening connection, a notification of the wrong shape, a failed catch-up or prune. */
  onError: (error: Error) => void;
  reconnectMs?: number;
}): EventFanout {
  if (state.dialect !== 'postgres') throw new Error('the event fan-out is for cluster mode (PostgreSQL)');
  let client: pg.Client | undefined;
  let stopped = false;
  let lostAt: Date | undefined;
  let startedAt = new Date(0);
  let reconnectTimer: NodeJS.Timeout | undefined;
  let pruneTimer: NodeJS.Timeout | undefined;
  const recent = new Set<number>();

  function deliver(id: number, event: FanoutEvent): void {
    if (recent.has(id)) return;
    recent.add(id);
    if (recent.size > RECENT_IDS) recent.delete(recent.values().next().value!);
    if (event.origin === origin) return;
    try {
      onEvent(event);
    } catch (error) {
      onError(error as Error);
    }
  }

  const fanoutEvent = (row: {
    origin: string;
    event: string;
    level: PublishedEvent['level'];
    fields: Record<string, unknown>;
    message: string | null;
  }): FanoutEvent => ({
    origin: row.origin,
    event: row.event,
    level: row.level,
    fields: row.fields,
    ...(row.message === null ? {} : { message: row.message }),
  });

  async function readBack(where: SQL): Promise<void> {
    const rows = await state.run((db) =>
      db.select().from(clusterEvents).where(where).orderBy(asc(clusterEvents.id)).limit(10_000),
    );
    for (const row of rows) deliver(row.id, fanoutEvent(row));
  }

  function onNotification(message: pg.Notification): void {
    if (message.channel !== EVENTS_CHANNEL) return;
    let parsed: z.infer<typeof Notified>;
    try {
      parsed = Notified.parse(JSON.parse(message.payload ?? ''));
    } catch (error) {
      onError(new Error(`an event notification of the wrong shape: ${(error as Error).message}`));
      return;
    }
    if ('event' in parsed) deliver(parsed.id, fanoutEvent(parsed));
    else if (parsed.origin !== origin && !recent.has(parsed.id))
      readBack(inArray(clusterEvents.id, [parsed.id])).catch((error: Error) => onError(error));
  }

  async function listen(): Promise<void> {
    const next = new pg.Client({ connectionString, application_name: `sitewarden-events-${origin}` });
    next.on('notification', onNotification);
    next.on('error', (error) => lose(next, error));
    next.on('end', () => lose(next, new Error('the listening connection closed')));
    try {
      await next.connect();
      await next.query(`LISTEN ${EVENTS_CHANNEL}`);
    } catch (error) {
      next.removeAllListeners('end');
      await next.end().catch(() => undefined);
      throw error;
    }
    client = next;
    if (lostAt) {
      // (not from before this fan-out started listening: those it was never to show)
      const since = new Date(Math.max(startedAt.getTime(), lostAt.getTime() - CATCH_UP_OVERLAP_MS));
      lostAt = undefined;
      await readBack(gt(clusterEvents.at, since));
    }
  }

  function lose(lost: pg.Client, error: Error): void {
    if (client !== lost || stopped) return;
    client = undefined;
    lostAt = clock.now();
    lost.removeAllListeners('end');
    lost.end().catch(() => undefined);
    onError(new Error(`the event fan-out lost its listening connection: ${error.message}`));
    scheduleReconnect();
  }

  function scheduleReconnect(): void {
    if (stopped || reconnectTimer) return;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      listen().catch((error: Error) => {
        onError(new Error(`the event fan-out could not listen again: ${error.message}`));
        scheduleReconnect();
      });
    }, reconnectMs);
  }

  async function prune(): Promise<void> {
    const before = new Date(clock.now().getTime() - RETENTION_MS);
    await state.run((db) => db.delete(clusterEvents).where(lt(clusterEvents.at, before)));
  }

  return {
    async publish(event) {
      const at = clock.now();
      // One statement: the row written and its notification sent when it commits.
      await state.run((db) =>
        db.execute(sql`
          with written as (
            insert into ${clusterEvents} (origin, event, level, fields, message, at)
            values (${origin}, ${event.event}, ${event.level}, ${JSON.stringify(event.fields)}::jsonb,
                    ${event.message ?? null}, ${at.toISOString()}::timestamptz)
            returning id, origin, event, level, fields, message
          ), payload as (select id, origin, row_to_json(written)::text as whole from written)
          select pg_notify(${EVENTS_CHANNEL},
            case when octet_length(whole) < ${PAYLOAD_LIMIT} then whole
                 else json_build_object('id', id, 'origin', origin)::text end)
          from payload`),
      );
    },

    async start() {
      stopped = false;
      startedAt = clock.now();
      await listen();
      pruneTimer = setInterval(() => void prune().catch((error: Error) => onError(error)), PRUNE_EVERY_MS);
      pruneTimer.unref();
    },

    async stop() {
      stopped = true;
      clearTimeout(reconnectTimer);
      clearInterval(pruneTimer);
      const current = client;
      client = undefined;
      if (current) {
        current.removeAllListeners('end');
        await current.end().catch(() => undefined);
      }
    },
  };
}

/**
 * A process's event bus joined to the cluster's (cluster mode): each event emitted here is published, in the
 * order emitted, and each event another process published is handed to this bus's subscribers of every
 * process's events (`Events.receive`: the live pages). A publish that fails is reported, never the emitter's.
 */
export function joinClusterEvents({
  events,
  onError,
  intercept,
  ...options
}: Omit<Parameters<typeof createEventFanout>[0], 'onEvent'> & {
  events: Events;
  /** Takes the fan-out's own announcements (not events of the bus: a cancel request); true when it took one. */
  intercept?: (event: FanoutEvent) => boolean;
}): {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Publishes an announcement that is not an event of the bus (another process's `intercept` takes it). */
  publish(event: PublishedEvent): Promise<void>;
} {
  const fanout = createEventFanout({
    ...options,
    onError,
    onEvent: (received) => {
      if (intercept?.(received)) return;
      const { event, level, fields, message } = received;
      events.receive({ event, level, fields, ...(message === undefined ? {} : { message }) });
    },
  });
  let publishing: Promise<void> = Promise.resolve();
  let unsubscribe: (() => void) | undefined;
  return {
    async start() {
      await fanout.start();
      unsubscribe ??= events.subscribe((event) => {
        publishing = publishing
          .then(() => fanout.publish(event))
          .catch((error: unknown) =>
            onError(new Error(`the event ${event.event} was not published: ${(error as Error).message}`)),
          );
      });
    },
    async stop() {
      unsubscribe?.();
      unsubscribe = undefined;
      await publishing;
      await fanout.stop();
    },
    publish: (event) => fanout.publish(event),
  };
}
