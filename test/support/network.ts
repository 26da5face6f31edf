import { createNetworkPolicy, LOOPBACK_NETWORKS } from '../../src/shared/network-policy.js';

/**
 * The network policy of the test harness (and of the benchmarks): loopback allowed besides public addresses,
 * as SITEWARDEN_ALLOWED_NETWORKS=127.0.0.0/8,::1 would; every test site is on 127.0.0.1.
 */
export const loopbackNetwork = createNetworkPolicy({ allowed: LOOPBACK_NETWORKS });
