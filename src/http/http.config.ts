import { z } from 'zod';
import { defineSettings, positiveInt } from '../shared/settings.js';
import { checkTrustedProxy } from './client-address.js';

/** The API and dashboard listener's settings: metrics, authentication limits, proxies, overload; read by src/config.ts. */
export const HTTP_SETTINGS = defineSettings({
  SITEWARDEN_METRICS_LISTEN: {
    schema: z
      .string()
      .regex(
        /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s]+):(\d{1,5})$/,
        'SITEWARDEN_METRICS_LISTEN must be host:port (an IPv6 host in brackets)',
      )
      .refine(
        (value) => Number(value.slice(value.lastIndexOf(':') + 1)) <= 65535,
        'SITEWARDEN_METRICS_LISTEN must end with a port number (0–65535)',
      )
      .optional(),
    defaultText: 'unset',
    example: '127.0.0.1:9464',
    doc: '`host:port` (IPv6 in brackets) of a separate listener serving `GET /metrics` without a token; then `/metrics` is not on the main listener. Unset: `/metrics` is on the main listener and needs an API token of at least the `viewer` role (a `client` token is refused)',
    comment:
      'GET /metrics (Prometheus): unset, it is on the main listener and needs an API token; with\nhost:port it is served there without a token instead (keep that address private).',
  },
  SITEWARDEN_AUTH_FAILURES_PER_MINUTE: {
    schema: positiveInt('SITEWARDEN_AUTH_FAILURES_PER_MINUTE', 30, 1_000_000),
    default: '30',
    doc: 'failed authentications (no, unknown or revoked token) a client address may send in a minute; past it, its requests without a valid token get `429 too-many-failed-authentications` until the minute ends. Requests with a valid token always pass',
    comment:
      'Failed authentications a client address may send per minute before its requests without a\nvalid token get 429s (valid tokens always pass).',
  },
  // Reverse proxies whose X-Forwarded-For names the client (src/http/client-address.ts): addresses and CIDR ranges.
  SITEWARDEN_TRUSTED_PROXIES: {
    schema: z
      .string()
      .default('')
      .transform((value) => value.split(/[\s,]+/).filter(Boolean))
      .superRefine((entries, context) => {
        for (const entry of entries) {
          const problem = checkTrustedProxy(entry);
          if (problem) context.addIssue({ code: 'custom', message: problem });
        }
      }),
    defaultText: 'unset (none)',
    example: '127.0.0.1,::1',
    doc: "reverse proxies in front of the daemon, as addresses or CIDR ranges (IPv4 or IPv6), separated by commas or spaces, e.g. `127.0.0.1,::1`. A request whose connection comes from one of them has the client address of the right-most `X-Forwarded-For` entry that is not one of them (what the last proxy saw; entries left of it are the client's own claim and never read); from any other peer the header is ignored. That address is what sign-in throttling, the API token failure limit and the sign-in events use. Behind a proxy, set it: otherwise every client shares the proxy's address, and its limits",
    comment:
      "Reverse proxies in front of the daemon (addresses or CIDR ranges, comma-separated). From them,\nthe client's address is the right-most X-Forwarded-For entry that is not a trusted proxy; from\nany other peer the header is ignored. Unset: none. Set it behind a proxy, or every client shares\nthe proxy's address (and its sign-in and token failure limits).",
  },
  // Past this event-loop lag the dashboard and API answer 503 overloaded (src/http/overload.ts); 0: never. Two seconds:
  // the daemon's own work blocks its loop for moments (a safe update's visual diff took ~0.8 s on a loaded 2-core
  // machine), and a user must not be refused for those; a loop behind by seconds is queueing without end.
  SITEWARDEN_OVERLOAD_LAG_MS: {
    schema: z.coerce
      .number({ error: 'SITEWARDEN_OVERLOAD_LAG_MS must be a whole number' })
      .int('SITEWARDEN_OVERLOAD_LAG_MS must be a whole number')
      .refine(
        (value) => value === 0 || (value >= 50 && value <= 60_000),
        'SITEWARDEN_OVERLOAD_LAG_MS must be 0 (never shed) or 50 to 60000',
      )
      .default(2000),
    default: '2000',
    doc: "overload shedding: while the event loop lags more than this (sampled every 100 ms), dashboard and API requests get `503 overloaded` with `Retry-After` at once instead of waiting in line; `/healthz`, `/readyz` (then `503`, its `event-loop` check failing), `/metrics`, `GET /api/health` and a site's approval landing still answer, and uptime probes, audits, backups and other scheduled work keep their schedule. `0` never sheds; otherwise 50 to 60000",
    comment:
      'Overload shedding: while the event loop lags more than this many ms, the dashboard and API answer\n503 overloaded with Retry-After instead of queueing; health, readiness and metrics still answer,\nand probes and scheduled work keep their schedule. 0: never shed; otherwise 50 to 60000.',
  },
});
