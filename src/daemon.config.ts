import { z } from 'zod';
import { defineSettings, onOff, positiveInt } from './shared/settings.js';

/** The daemon's own settings (listener, data directory, logs, key, readiness, shutdown), composed by src/config.ts. */
export const DAEMON_SETTINGS = defineSettings({
  SITEWARDEN_HOST: {
    schema: z.string().min(1).default('127.0.0.1'),
    default: '127.0.0.1',
    doc: 'listen address',
    readme: 'listen address',
    comment: 'Where the HTTP API listens. Keep it on loopback behind a TLS reverse proxy.',
  },
  SITEWARDEN_PORT: {
    schema: z.coerce
      .number({ error: 'SITEWARDEN_PORT must be a port number' })
      .int()
      .min(0)
      .max(65535, 'SITEWARDEN_PORT must be a port number (0–65535)')
      .default(8080),
    default: '8080',
    doc: 'listen port',
    readme: 'listen port',
  },
  SITEWARDEN_PUBLIC_URL: {
    schema: z.url({ protocol: /^https?$/, error: 'SITEWARDEN_PUBLIC_URL must be an http(s) URL' }).optional(),
    defaultText: '`http://HOST:PORT`',
    example: 'https://sitewarden.example.org',
    doc: 'the address site admins’ browsers use to reach the daemon (WordPress redirects there after approving a connection)',
    readme: 'the address site admins’ browsers use to reach the daemon (your TLS proxy)',
    comment:
      "The address site admins' browsers use to reach this daemon; WordPress redirects there\nafter an admin approves a connection. Defaults to http://HOST:PORT.",
  },
  SITEWARDEN_DATA_DIR: {
    schema: z.string().min(1).default('./data'),
    default: './data',
    doc: 'database, key file, bootstrap token, backups, audit reports. Owner-only: at every start the directory and everything in it are made 0700 (directories) / 0600 (files), whoever created them (`daemon.permissions_tightened` says what changed), and the daemon creates files with umask 077. One daemon per directory: see [operations.md](operations.md#one-daemon-per-data-directory)',
    readme: 'database, key file, backups, reports; made owner-only at every start; one daemon per directory',
    comment: 'Data directory (database, key file, admin token). The systemd unit sets /var/lib/sitewarden.',
  },
  SITEWARDEN_LOG_LEVEL: {
    schema: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
        error: 'SITEWARDEN_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
      })
      .default('info'),
    default: 'info',
    doc: '`fatal`, `error`, `warn`, `info`, `debug`, `trace`, `silent`',
    comment: 'fatal, error, warn, info, debug, trace or silent',
  },
  SITEWARDEN_SECRET_KEY: {
    schema: z.string().optional(),
    defaultText: 'key file `DATA_DIR/secret.key`',
    example: '',
    doc: '32-byte key, base64 or hex, that encrypts site credentials (AES-256-GCM); generated 0600 on first start if not given. Back it up: without it every site must be reconnected.',
    readme: 'the key that encrypts site credentials; generated on first start. Back it up',
    comment:
      '32-byte key (base64 or hex) that encrypts site credentials. Without it a key file is\ngenerated in the data directory; either way, back it up.',
  },
  SITEWARDEN_QUEUE_STALL_MINUTES: {
    schema: positiveInt('SITEWARDEN_QUEUE_STALL_MINUTES', 60, 7 * 24 * 60),
    default: '60',
    doc: '`/readyz` fails when a queue (site tasks, uptime probes, audits, backups) has work and finished nothing for this long',
    comment: '/readyz fails when a queue has work and finished nothing for this long.',
  },
  SITEWARDEN_SHUTDOWN_GRACE_MS: {
    schema: positiveInt('SITEWARDEN_SHUTDOWN_GRACE_MS', 20_000, 600_000),
    default: '20000',
    doc: 'how long shutdown waits for running work, in all (keep it below the unit’s `TimeoutStopSec`, 30 s); running backups are aborted at once and retried at the next start',
    comment:
      "How long shutdown waits for running work, in all (keep it below the unit's TimeoutStopSec=30s).\nRunning backups are aborted at once and retried at the next start.",
  },
});

/** SITEWARDEN_SCHEDULED_*: read by src/scheduled-work.ts, which starts the work of several features. */
export const SCHEDULED_SETTINGS = defineSettings({
  SITEWARDEN_SCHEDULED_UPTIME_PROBES: {
    schema: onOff('SITEWARDEN_SCHEDULED_UPTIME_PROBES'),
    default: 'on',
    doc: '`off`: no uptime probes for any site (monitors, history and roll-ups stay)',
    comment:
      "Scheduled work, for every site at once: off stops uptime probes, scheduled audits (a newly\nconnected site's first audit included) or scheduled backups; on-demand audits and backups\n(POST /api/sites/{id}/performance, POST /api/sites/{id}/backups) work either way.",
  },
  SITEWARDEN_SCHEDULED_AUDITS: {
    schema: onOff('SITEWARDEN_SCHEDULED_AUDITS'),
    default: 'on',
    doc: '`off`: no scheduled audits for any site, a newly connected site’s first audit included; `POST /api/sites/{id}/performance` still audits',
  },
  SITEWARDEN_SCHEDULED_BACKUPS: {
    schema: onOff('SITEWARDEN_SCHEDULED_BACKUPS'),
    default: 'on',
    doc: '`off`: no scheduled backups for any site, whatever its own `backups` settings; `POST /api/sites/{id}/backups` still backs up',
  },
});
