import { Writable } from 'node:stream';
import { createLogger } from '../../src/shared/logger.js';

/** A real pino logger whose JSON lines tests can read back. */
export function createCapturedLogger() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const logger = createLogger({ level: 'debug', destination: stream });
  return {
    logger,
    raw: () => lines.join('\n'),
    records: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
    events: (name: string) => lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((record) => record.event === name),
  };
}
