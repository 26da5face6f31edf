import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isProblem } from '../../src/shared/errors.js';
import { parseStored, parseStoredOrNull, storedDataProblems } from '../../src/shared/stored-json.js';

const Params = z.object({ target: z.string() });

describe('parseStored', () => {
  it('answers what the schema describes', () => {
    expect(parseStored(Params, '{"target":"s3"}', 'the params of job x')).toEqual({ target: 's3' });
  });

  it('refuses what is not JSON, or not of the shape written, as stored-data-unreadable naming what', () => {
    for (const [text, detail] of [
      ['{"target":', 'the params of job x could not be read: it is not JSON'],
      ['{"target":7}', 'the params of job x could not be read at target: '],
      ['null', 'the params of job x could not be read: '],
    ] as const) {
      let thrown: unknown;
      try {
        parseStored(Params, text, 'the params of job x');
      } catch (error) {
        thrown = error;
      }
      expect(isProblem(thrown, storedDataProblems.unreadable), text).toBe(true);
      expect((thrown as Error).message).toContain(detail);
    }
    // A user can reach it through a route: a problem with a stable type, never a 500.
    expect(storedDataProblems.unreadable).toMatchObject({ name: 'stored-data-unreadable' });
    expect(storedDataProblems.unreadable.status).toBeLessThan(500);
  });

  it('parseStoredOrNull answers null instead of throwing', () => {
    expect(parseStoredOrNull(Params, 'nope')).toBeNull();
    expect(parseStoredOrNull(Params, '{}')).toBeNull();
    expect(parseStoredOrNull(Params, '{"target":"a"}')).toEqual({ target: 'a' });
  });
});

/**
 * JSON the daemon reads is parsed with a schema, never cast (`JSON.parse(…) as T`). The few casts left
 * read the daemon's own files at start or its own child's stdin, each for the reason given.
 */
const ALLOWED: Record<string, string> = {
  'src/version.ts': 'our own package.json, read at start; a broken one fails the start',
  'src/db/database.ts': 'the migrations journal shipped with the daemon, read at start before anything else',
  'src/performance/audit-worker.ts':
    'the worker reads the request its parent just wrote to its stdin; it imports types only from the daemon (no zod schemas at run time)',
};

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('stored JSON is parsed, not cast', () => {
  it('has no `JSON.parse(…) as` in src outside the allow-list', () => {
    const root = resolve(import.meta.dirname, '../..');
    const casts: string[] = [];
    for (const path of sources(join(root, 'src'))) {
      const file = relative(root, path);
      readFileSync(path, 'utf8')
        .split('\n')
        .forEach((line, index) => {
          if (/JSON\.parse\(.*\) as /.test(line) && !(file in ALLOWED))
            casts.push(`${file}:${index + 1}: ${line.trim()}`);
        });
    }
    expect(casts).toEqual([]);
  });
});
