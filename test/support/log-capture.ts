import { Writable } from 'node:stream';
import { createLogger } from '../../src/shared/logger.js';
import { observeLogRecord } from './event-coverage.js';

/**
 * A real pino logger whose JSON lines tests can read back. Every catalogued event it sees is
 * checked against the catalogue (a test that logs one without a documented field fails) and
 * counted for the end-of-run coverage check.
 */
export function createCapturedLogger() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const added = chunk.toString('utf8').split('\n').filter(Boolean);
      lines.push(...added);
      for (const line of added) observeLogRecord(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const logger = createLogger({ level: 'debug', destination: stream });
  return {
    logger,
    raw: () => lines.join('\n'),
    records: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
    events: (name: string) =>
      lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((record) => record.event === name),
  };
}
