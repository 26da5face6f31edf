import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';
import { createEvents, type Events, type PublishedEvent } from './event-bus.js';

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

export function createLogger({
  level,
  destination,
}: {
  level: LevelWithSilent;
  destination?: DestinationStream;
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
  return logger;
}

/** Writes an event as one log line: `{ event, ...fields }` at its catalogued level, the message defaulting to its name. */
function logLineWriter(logger: Logger) {
  return ({ event, level, fields, message }: PublishedEvent) => logger[level]({ event, ...fields }, message ?? event);
}

/**
 * The composition's events: each is logged inline as it is emitted (so log lines keep the
 * order of what happened), other subscribers (webhooks) get it after the emitter's work, and
 * a subscriber that fails is logged.
 */
export function createLoggedEvents(logger: Logger): Events {
  const events = createEvents({
    onError: (error, event) => logger.warn({ err: error, subscribedEvent: event.event }, 'an event subscriber failed'),
  });
  events.subscribe(logLineWriter(logger), { inline: true });
  return events;
}
