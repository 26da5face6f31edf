import type { Logger } from 'pino';
import type { ProbeRow, UptimeRepository } from './uptime.repository.js';

/**
 * Raw probes are buffered and written once a second in one transaction: one commit for a
 * second's worth of probes instead of one per probe. State changes and downtime events do
 * not wait for this; they are written at once by the service.
 */
export function createProbeWriter({ repository, logger }: { repository: UptimeRepository; logger: Logger }) {
  let buffer: ProbeRow[] = [];
  return {
    add(row: ProbeRow): void {
      buffer.push(row);
    },
    /** Drops buffered probes of a removed site. */
    forget(siteId: string): void {
      buffer = buffer.filter((row) => row.siteId !== siteId);
    },
    flush(): number {
      if (buffer.length === 0) return 0;
      const rows = buffer;
      buffer = [];
      try {
        repository.insertProbes(rows);
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

export type ProbeWriter = ReturnType<typeof createProbeWriter>;
