import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { StateDatabase } from '../db/state-db.js';
import { ActorSchema, type Actor } from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import type { PublishedEvent } from '../shared/event-bus.js';
import { jobCancelRequests } from './job-cancel-requests.pg-table.js';

/**
 * Cluster mode (issue 34; docs/design/cluster-state.md, "A running job's row is its run's alone"): a running job
 * asked to stop by a process that does not run it. The request is kept in `job_cancel_requests` and announced on
 * the event fan-out (event-fanout.ts); the process that runs the job stops it (its kind ends it `cancelled`, naming
 * who asked), and a process that takes the job later (its worker died and the queue handed it on) finds the
 * request when it starts it, and stops it at once. A request is forgotten once the job it named has ended.
 */
export interface CancelRequests {
  /** Keeps the request and tells every other process. */
  request(jobId: string, by: Actor | undefined): Promise<void>;
  /** The request kept for a job, if any: read when a process starts it. */
  pending(jobId: string): Promise<{ by: Actor | undefined } | undefined>;
  /** Forgets a job's request (the job ended). */
  forget(jobId: string): Promise<void>;
  /** Each request another process announces. */
  listen(onRequest: (jobId: string, by: Actor | undefined) => void): void;
}

/** The fan-out event a request goes by. */
const CANCEL_REQUESTED = 'job.cancel_requested';

const Announced = z.object({
  jobId: z.string().min(1),
  requestedByKind: ActorSchema.shape.kind.nullable(),
  requestedById: z.string().nullable(),
});

const actorOf = (kind: Actor['kind'] | null, id: string | null): Actor | undefined =>
  kind !== null && id !== null ? { kind, id } : undefined;

/**
 * The requests on the cluster's database; `publish` is the fan-out's, and the composition hands each event the
 * fan-out delivers to `deliver` (the fan-out has one listener per process).
 */
export function createCancelRequests({
  state,
  clock,
  publish,
  onError,
}: {
  state: StateDatabase;
  clock: Clock;
  publish: (event: PublishedEvent) => Promise<void>;
  /** An announcement of the wrong shape. */
  onError: (error: Error) => void;
}): CancelRequests & {
  /** Takes a cancel request another process announced (the fan-out's event); whether it was one. */
  deliver(event: PublishedEvent): boolean;
} {
  if (state.dialect !== 'postgres') throw new Error('cancel requests across processes are for cluster mode');
  const listeners: Array<(jobId: string, by: Actor | undefined) => void> = [];
  const byJob = (jobId: string) => eq(jobCancelRequests.jobId, jobId);

  return {
    async request(jobId, by) {
      const row = {
        jobId,
        requestedByKind: by?.kind ?? null,
        requestedById: by?.id ?? null,
        requestedAt: clock.now(),
      };
      await state.run((db) =>
        db.insert(jobCancelRequests).values(row).onConflictDoUpdate({ target: jobCancelRequests.jobId, set: row }),
      );
      const { requestedAt: _at, ...fields } = row;
      await publish({ event: CANCEL_REQUESTED, level: 'info', fields });
    },

    async pending(jobId) {
      const [row] = await state.run((db) => db.select().from(jobCancelRequests).where(byJob(jobId)));
      return row && { by: actorOf(row.requestedByKind, row.requestedById) };
    },

    async forget(jobId) {
      await state.run((db) => db.delete(jobCancelRequests).where(byJob(jobId)));
    },

    listen(onRequest) {
      listeners.push(onRequest);
    },

    deliver(event) {
      if (event.event !== CANCEL_REQUESTED) return false;
      const parsed = Announced.safeParse(event.fields);
      if (!parsed.success) {
        onError(new Error(`a cancel request of the wrong shape: ${parsed.error.message}`));
        return true;
      }
      const { jobId, requestedByKind, requestedById } = parsed.data;
      for (const listener of listeners) listener(jobId, actorOf(requestedByKind, requestedById));
      return true;
    },
  };
}
