import { z } from 'zod';
import { parseAllowedNetworks } from './network-policy.js';
import { defineSettings } from './settings.js';

/** The network boundary (src/shared/network-policy.ts): what besides public addresses the daemon may connect to. */
export const NETWORK_SETTINGS = defineSettings({
  SITEWARDEN_ALLOWED_NETWORKS: {
    schema: z
      .string()
      .default('')
      .transform((value, context) => {
        try {
          return parseAllowedNetworks(value);
        } catch (error) {
          context.addIssue({ code: 'custom', message: (error as Error).message });
          return z.NEVER;
        }
      }),
    defaultText: '(none)',
    example: '127.0.0.0/8,::1,10.20.0.0/16,wp.internal',
    doc: "what the daemon may connect to besides public addresses, for sites, their redirects, uptime probes, audits, screenshots and webhooks: comma-separated CIDRs (`10.20.0.0/16`), addresses, host names (`wp.internal`) and suffixes (`*.lan`). Loopback, private, CGNAT, link-local, cloud metadata, unspecified, multicast and reserved addresses are refused otherwise (`422 address-not-allowed`; probes and deliveries fail with cause `address_not_allowed`); a site on the daemon's own host needs `127.0.0.0/8,::1`. See [the network boundary](design/network-boundary.md)",
    comment:
      'The network boundary (docs/design/network-boundary.md): sites, redirects, uptime probes, audits,\nscreenshots and webhooks reach public addresses only, plus what this lists: comma-separated CIDRs,\naddresses, host names and *.suffixes. Loopback, private, link-local, cloud metadata and other\nspecial addresses are refused otherwise; a site on this same host needs 127.0.0.0/8,::1.',
  },
});
