import type { Logger } from 'pino';
import type { StateDatabase } from '../../src/db/state-db.js';
import { systemClock } from '../../src/shared/clock.js';
import { createLoggedEvents } from '../../src/shared/logger.js';
import { createSiteLifecycle } from '../../src/sites/site-lifecycle.js';
import { createSitesRepository } from '../../src/sites/sites.repository.js';
import { createProber } from '../../src/uptime/prober.js';
import type { UptimeCluster } from '../../src/uptime/cluster-probing.js';
import { DEFAULT_UPTIME_CONFIG, type UptimeConfig } from '../../src/uptime/uptime.config.js';
import { createUptimeRepository } from '../../src/uptime/uptime.repository.js';
import { createUptimeService } from '../../src/uptime/uptime.service.js';
import { loopbackNetwork } from '../../test/support/network.js';

/**
 * The real uptime service as src/services.ts composes it, on `state`, probing loopback targets: the one
 * process of `uptime steady` and each worker of `uptime cluster` (given `cluster`).
 */
export function benchUptimeService(
  state: StateDatabase,
  {
    logger,
    config,
    onProbeStart,
    cluster,
  }: { logger: Logger; config: UptimeConfig; onProbeStart: (lagMs: number) => void; cluster?: UptimeCluster },
) {
  return createUptimeService({
    repository: createUptimeRepository(state),
    sitesRepository: createSitesRepository(state),
    lifecycle: createSiteLifecycle(),
    prober: createProber({
      network: loopbackNetwork,
      maxBodyBytes: DEFAULT_UPTIME_CONFIG.maxBodyBytes,
      userAgent: 'Sitewarden-bench',
    }),
    clock: systemClock,
    logger,
    events: createLoggedEvents(logger),
    config,
    onProbeStart,
    ...(cluster && { cluster }),
  });
}
