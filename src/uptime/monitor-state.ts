import type { ProbeCause, ProbeSettings } from './prober.js';
import type { ProbeRow } from './uptime.repository.js';
import type { UptimeStatus } from './uptime.table.js';

/**
 * The per-site state machine, pure so it can be tested without clocks or sockets. A site goes
 * down only after `confirmations` consecutive failures (the downtime starts at the first of
 * them) and comes back up on the first success.
 */
export interface MonitorState {
  status: UptimeStatus;
  /** When the current status began (for `down`: the first failed probe); epoch ms. */
  since: number | null;
  failures: number;
  firstFailureAt: number | null;
  firstFailureCause: ProbeCause | null;
}

export type Transition =
  | { kind: 'down'; startedAt: number; cause: ProbeCause }
  | { kind: 'up'; at: number; downSince: number; downtimeMs: number }
  /** From unknown (new site, or never probed): no event, but the status is persisted. */
  | { kind: 'first-up'; at: number };

export const initialState = (status: UptimeStatus = 'unknown', since: number | null = null): MonitorState => ({
  status,
  since,
  failures: 0,
  firstFailureAt: null,
  firstFailureCause: null,
});

export function applyProbe(
  state: MonitorState,
  probe: { at: number; up: boolean; cause: ProbeCause | null },
  confirmations: number,
): { state: MonitorState; transition: Transition | null; recheck: boolean } {
  if (probe.up) {
    const next = initialState('up', state.status === 'up' ? state.since : probe.at);
    if (state.status === 'down') {
      const downSince = state.since ?? probe.at;
      return {
        state: next,
        transition: { kind: 'up', at: probe.at, downSince, downtimeMs: probe.at - downSince },
        recheck: false,
      };
    }
    return {
      state: next,
      transition: state.status === 'unknown' ? { kind: 'first-up', at: probe.at } : null,
      recheck: false,
    };
  }
  const failures = state.failures + 1;
  const firstFailureAt = state.failures === 0 ? probe.at : (state.firstFailureAt ?? probe.at);
  const firstFailureCause =
    state.failures === 0 ? (probe.cause ?? 'protocol') : (state.firstFailureCause ?? probe.cause ?? 'protocol');
  const next: MonitorState = { ...state, failures, firstFailureAt, firstFailureCause };
  if (state.status === 'down') return { state: next, transition: null, recheck: false };
  if (failures >= confirmations) {
    return {
      state: { ...next, status: 'down', since: firstFailureAt },
      transition: { kind: 'down', startedAt: firstFailureAt, cause: firstFailureCause },
      recheck: false,
    };
  }
  return { state: next, transition: null, recheck: true };
}

/** A monitored site as the uptime service holds it in memory: its settings, state and latest probes. */
export interface SiteMonitor {
  siteId: string;
  url: string;
  settings: ProbeSettings;
  intervalMs: number;
  paused: boolean;
  state: MonitorState;
  recent: ProbeRow[];
  certificateExpiresAt: number | null;
  certificateWarnedFor: number | null;
}
