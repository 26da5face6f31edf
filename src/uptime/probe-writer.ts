import type { Logger } from 'pino';
import type { BufferedStatus, ProbeRow, UptimeRepository } from './uptime.repository.js';

/**
 * Raw probes are buffered and written once a second in one transaction: one commit for a
 * second's worth of probes instead of one per probe. Changes that open or close downtime
 * events do not wait for this; the service writes them at once (a buffered status is written only
 * over an older one, so a batch that lands after such a change does not undo it).
 */
export function createProbeWriter({ repository, logger }: { repository: UptimeRepository; logger: Logger }) {
  let buffer: ProbeRow[] = [];
  let statuses: BufferedStatus[] = [];
  /** The write in progress (or the last one, settled). */
  let writing: Promise<unknown> = Promise.resolve();
  /** The flush waiting for it, which takes the buffer when its turn comes. */
  let next: Promise<number> | undefined;

  async function write(): Promise<number> {
    if (buffer.length === 0 && statuses.length === 0) return 0;
    const rows = buffer;
    const changes = statuses;
    buffer = [];
    statuses = [];
    try {
      await repository.insertProbes(rows, changes);
    } catch (error) {
      logger.error({ err: error, probes: rows.length }, 'writing uptime probes failed');
      return 0;
    }
    return rows.length;
  }

  return {
    add(row: ProbeRow): void {
      buffer.push(row);
    },
    /**
     * A status change that opens or closes no event (a site's first "up") rides with the next
     * batch: losing it in a crash costs one probe to learn again, and 10,000 sites starting
     * up do not make 10,000 commits.
     */
    addStatus(change: BufferedStatus): void {
      statuses.push(change);
    },
    /** A change written at once supersedes a buffered one that would otherwise land after it. */
    supersedeStatus(siteId: string): void {
      statuses = statuses.filter((change) => change.siteId !== siteId);
    },
    /** Drops buffered probes of a removed site. */
    forget(siteId: string): void {
      buffer = buffer.filter((row) => row.siteId !== siteId);
      statuses = statuses.filter((change) => change.siteId !== siteId);
    },
    /**
     * Writes what is buffered. One write at a time: a flush asked for while one is writing waits for it
     * and then writes everything buffered by then (flushes asked for meanwhile are that one write), so
     * batches land in order and awaiting a flush awaits everything buffered before it was asked. Never
     * rejects: a failed batch is logged and counts 0.
     */
    flush(): Promise<number> {
      next ??= writing.then(() => {
        next = undefined;
        return write();
      });
      writing = next;
      return next;
    },
    get buffered() {
      return buffer.length;
    },
  };
}
