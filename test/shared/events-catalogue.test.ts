import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventCatalogue } from '../../src/shared/events.js';
import { catalogueViolation, NOT_PRODUCIBLE_IN_TESTS } from '../support/event-coverage.js';

const root = resolve(import.meta.dirname, '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('the log-event catalogue', () => {
  const documented = new Map(
    [...readFileSync(join(root, 'docs/events.md'), 'utf8').matchAll(/^\| `([a-z_.-]+)` \| (\w+) \| ([^|]*) \|/gm)].map(
      (match) => [
        match[1]!,
        { level: match[2]!, fields: [...match[3]!.matchAll(/`(\w+)`/g)].map((field) => field[1]!) },
      ],
    ),
  );

  it('documents every event in the code with the same level and fields', () => {
    for (const [name, entry] of Object.entries(eventCatalogue)) {
      expect(documented.get(name), name).toEqual({ level: entry.level, fields: [...entry.fields] });
    }
    expect([...documented.keys()].sort()).toEqual(Object.keys(eventCatalogue).sort());
  });

  it('has every emitted event in the catalogue', () => {
    const emitted = sourceFiles(join(root, 'src')).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/\b(?:events\.emit|jobEvent)\(\s*'([^']+)'/g)].map((match) => match[1]!),
    );
    expect(emitted.length).toBeGreaterThan(10);
    for (const name of emitted) expect(Object.keys(eventCatalogue), name).toContain(name);
  });

  it('never names a field after a key every log line already has', () => {
    // The log line spreads the fields after `event`: a field called `event` would overwrite the event's name.
    for (const [name, entry] of Object.entries(eventCatalogue)) {
      for (const reserved of ['event', 'level', 'time', 'msg', 'service'])
        expect(entry.fields, name).not.toContain(reserved);
    }
  });

  it('checks logged records against the catalogue: a missing field or another level is a violation, a null value is not', () => {
    const record = {
      level: 'error',
      event: 'site.down',
      siteId: 'site_1',
      url: 'http://127.0.0.1:1',
      cause: 'connect',
      firstFailureAt: null,
    };
    expect(catalogueViolation(record)).toBeNull();
    const { cause: _cause, ...withoutCause } = record;
    expect(catalogueViolation(withoutCause)).toMatch(/site\.down was logged without its documented field\(s\) cause/);
    expect(catalogueViolation({ ...record, level: 'warn' })).toMatch(/at warn, the catalogue says error/);
    expect(catalogueViolation({ ...record, event: 'site.dwon' })).toMatch(/not in the event catalogue/);
    expect(catalogueViolation({ level: 'info', msg: 'no event here' })).toBeNull();
  });

  it('exempts only catalogued events from the coverage check, each with a reason', () => {
    for (const [name, reason] of Object.entries(NOT_PRODUCIBLE_IN_TESTS)) {
      expect(Object.keys(eventCatalogue), name).toContain(name);
      expect(reason.length, name).toBeGreaterThan(20);
    }
  });
});
