import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';

/** Paths that might ever hold a secret are redacted, as a second line of defence. */
const REDACT_PATHS = [
  'password',
  'applicationPassword',
  'token',
  'authorization',
  '*.password',
  '*.applicationPassword',
  '*.token',
  '*.authorization',
  'req.headers.authorization',
  'headers.authorization',
];

export function createLogger({ level, destination }: { level: LevelWithSilent; destination?: DestinationStream }): Logger {
  return pino(
    {
      level,
      base: { service: 'sitewarden' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}
