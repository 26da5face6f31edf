import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';
import { attachEventBus, type EventBus } from './event-bus.js';

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

/** `events`: the bus `logEvent` publishes catalogued events on (see `eventBusOf`; one is made on first use if none is given). */
export function createLogger({
  level,
  destination,
  events,
}: {
  level: LevelWithSilent;
  destination?: DestinationStream;
  events?: EventBus;
}): Logger {
  const logger = pino(
    {
      level,
      base: { service: 'sitewarden' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
  if (events) attachEventBus(logger, events);
  return logger;
}
