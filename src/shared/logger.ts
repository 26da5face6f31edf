import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';
import { createEvents, type Events, type PublishedEvent } from './event-bus.js';

/** Keys that might ever hold a secret: censored in every log line, as a second line of defence. */
const SECRET_KEYS = new Set(['password', 'applicationPassword', 'token', 'authorization']);
const CENSORED = '[redacted]';
/** How deep below the logged object's own keys a secret key is looked for (`req.headers.authorization` is 2). */
const SECRET_DEPTH = 2;

const isPlain = (value: object) => {
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null || Array.isArray(value);
};

/**
 * The logged object with every secret key's value censored, down to SECRET_DEPTH in plain objects
 * and arrays; copied only where something is censored, the caller's object never changed. Instead
 * of pino's `redact`, which parses each of its paths again on every line and copies what it walks
 * (a tenth of a bulk site update's garbage, bench/bulk-machinery.ts): most lines hold no secret key
 * and pass through as they are.
 */
export function censorSecrets<T extends object>(value: T, depth = 0): T {
  let copy: Record<string, unknown> | undefined;
  const fields = value as Record<string, unknown>;
  for (const key in fields) {
    if (!Object.hasOwn(fields, key)) continue;
    const field = fields[key];
    let kept = field;
    if (SECRET_KEYS.has(key)) {
      if (field !== undefined && field !== null) kept = CENSORED;
    } else if (depth < SECRET_DEPTH && typeof field === 'object' && field !== null && isPlain(field)) {
      kept = censorSecrets(field, depth + 1);
    }
    if (kept !== field) {
      copy ??= (Array.isArray(value) ? [...value] : { ...fields }) as Record<string, unknown>;
      copy[key] = kept;
    }
  }
  return (copy as T | undefined) ?? value;
}

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
      formatters: { level: (label) => ({ level: label }), log: (object) => censorSecrets(object) },
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
