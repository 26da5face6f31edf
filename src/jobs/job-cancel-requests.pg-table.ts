import { pgTable, text } from 'drizzle-orm/pg-core';
import { timestampMs } from '../db/pg-columns.js';

/**
 * Cluster mode only (issue 34; cancel-requests.ts): a running job asked to stop, kept until it ends, so that the
 * process that takes it next (its worker died, the queue handed it on) stops it too. The process running it hears
 * of the request on the event fan-out. SQLite mode has one process, which stops the job at once.
 */
export const jobCancelRequests = pgTable('job_cancel_requests', {
  jobId: text('job_id').primaryKey(),
  /** Who asked (`token` or `user`, and its id); null when the daemon itself did. */
  requestedByKind: text('requested_by_kind', { enum: ['token', 'user'] }),
  requestedById: text('requested_by_id'),
  requestedAt: timestampMs('requested_at').notNull(),
});
