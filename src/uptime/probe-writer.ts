import type { Logger } from 'pino';
import type { BufferedStatus, ProbeRow, UptimeRepository } from './uptime.repository.js';

/**
 * Raw probes are buffered and written once a second in one transaction: one commit for a
 * second's worth of probes instead of one per probe. Changes that open or close downtime
 * events do not wait for this; the service writes them at once.
 */
export function createProbeWriter({ repository, logger }: { repository: UptimeRepository; logger: Logger }) {
  let buffer: ProbeRow[] = [];
  let statuses: BufferedStatus[] = [];
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
    flush(): number {
      if (buffer.length === 0 && statuses.length === 0) return 0;
      const rows = buffer;
      const changes = statuses;
      buffer = [];
      statuses = [];
      try {
        repository.insertProbes(rows, changes);
      } catch (error) {
        logger.error({ err: error, probes: rows.length }, 'writing uptime probes failed');
        return 0;
      }
      return rows.length;
    },
    get buffered() {
      return buffer.length;
    },
  };
}
