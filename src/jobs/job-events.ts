import type { Actor } from '../shared/actor.js';
import type { Events } from '../shared/event-bus.js';
import type { Settlement } from './job-kind.js';
import type { JobRow } from './jobs.table.js';

/**
 * The job runner's lifecycle events, the same for every kind: a settled job's own events (its
 * kind's `backup.completed`, `restore.failed`, …), `job.interrupted` for a job the last process
 * left unfinished (requeued, failed or retried) or a run that was cut short, and `job.cancelled`
 * with who asked, for a queued job cancelled at once or a running one once it has stopped.
 */
export function createJobEvents(events: Events) {
  function announce(job: Pick<JobRow, 'id' | 'kind' | 'siteId'>, settlement: Settlement): void {
    for (const { name, fields } of settlement.events) events.emit(name, fields as never);
    if (settlement.interrupted) interrupted(job, 'failed');
  }

  function interrupted(
    job: Pick<JobRow, 'id' | 'kind' | 'siteId'>,
    action: 'requeued' | 'failed' | 'retried',
    extra: Record<string, unknown> = {},
  ): void {
    events.emit('job.interrupted', { kind: job.kind, jobId: job.id, siteId: job.siteId, action, ...extra });
  }

  function cancelled(job: JobRow, state: 'queued' | 'running', by: Actor | undefined): void {
    events.emit('job.cancelled', {
      kind: job.kind,
      jobId: job.id,
      siteId: job.siteId,
      state,
      requestedByKind: by?.kind ?? null,
      requestedById: by?.id ?? null,
    });
  }

  return { announce, interrupted, cancelled };
}

export type JobEvents = ReturnType<typeof createJobEvents>;
