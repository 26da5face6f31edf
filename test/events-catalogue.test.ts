import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventCatalogue } from '../src/shared/events.js';

const root = resolve(import.meta.dirname, '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('the log-event catalogue', () => {
  const documented = new Map(
    [...readFileSync(join(root, 'docs/events.md'), 'utf8').matchAll(/^\| `([a-z_.]+)` \| (\w+) \| ([^|]*) \|/gm)].map((match) => [
      match[1]!,
      { level: match[2]!, fields: [...match[3]!.matchAll(/`(\w+)`/g)].map((field) => field[1]!) },
    ]),
  );

  it('documents every event in the code with the same level and fields', () => {
    for (const [name, entry] of Object.entries(eventCatalogue)) {
      expect(documented.get(name), name).toEqual({ level: entry.level, fields: [...entry.fields] });
    }
    expect([...documented.keys()].sort()).toEqual(Object.keys(eventCatalogue).sort());
  });

  it('has every emitted event in the catalogue', () => {
    const emitted = sourceFiles(join(root, 'src')).flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/logEvent\(\s*[\w.]+,\s*'([^']+)'/g)].map((match) => match[1]!));
    expect(emitted.length).toBeGreaterThan(10);
    for (const name of emitted) expect(Object.keys(eventCatalogue), name).toContain(name);
  });
});
