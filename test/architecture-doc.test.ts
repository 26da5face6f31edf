import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  layerProblems,
  layerSection,
  moduleImports,
  PAGE,
  srcEntries,
  triggerDeclarations,
  withSection,
} from '../scripts/architecture-doc.mjs';

/**
 * One list of the layers (scripts/layers.cjs, issue 35): dependency-cruiser's rules are built from
 * it, and docs/architecture.md's tables and module diagram are written from it and the imports in src/.
 */
const root = resolve(import.meta.dirname, '..');
const require = createRequire(import.meta.url);
type Module = { name: string; layer: 'base' | 'feature' | 'composition'; tier?: number };
const { MODULES } = require('../scripts/layers.cjs') as { MODULES: Module[] };
type Rule = { name: string; from: { path?: string; pathNot?: string | string[] }; to: { path?: string } };
const { forbidden } = require('../.dependency-cruiser.cjs') as { forbidden: Rule[] };

/** A path inside the module: `sites/` → `src/sites/a.ts`, `main.ts` → `src/main.ts`. */
const pathIn = (name: string) => `src/${name}${name.endsWith('/') ? 'a.ts' : ''}`;
const rule = (name: string) => forbidden.find((r) => r.name === name)!;

describe('the layers of src/, written once', () => {
  it('gives docs/architecture.md the section npm run docs:architecture writes', async () => {
    expect(layerProblems(srcEntries())).toEqual([]);
    const page = readFileSync(join(root, PAGE), 'utf8');
    const wanted = withSection(page, layerSection(await moduleImports(), await triggerDeclarations()));
    expect(page, 'run npm run docs:architecture').toBe(wanted);
  }, 120_000);

  it('names a folder or file of src/ without a layer, and a listed module src/ no longer has', () => {
    const entries = srcEntries();
    expect(layerProblems([...entries, 'reports/', 'worker.ts'])).toEqual([
      expect.stringContaining('src/reports/ has no layer'),
      expect.stringContaining('src/worker.ts has no layer'),
    ]);
    expect(layerProblems(entries.filter((entry) => entry !== 'fleet/'))).toEqual([
      expect.stringContaining('names src/fleet/, which src/ does not have'),
    ]);
  });

  it('draws every module once, in its layer, and an arrow only for an import between two modules of one layer', () => {
    const section = layerSection([
      ['safe-updates/', 'backups/'],
      ['dashboard/', 'users/'],
      ['wordpress/', 'jobs/'],
    ]);
    const diagram = /```mermaid\n([\s\S]*?)```/.exec(section)![1]!;
    for (const { name } of MODULES) {
      const label = name.replace(/\/$/, '');
      expect(diagram.match(new RegExp(`\\["${label}"\\]`, 'g')), name).toHaveLength(1);
      expect(section, `${name} in a table`).toContain(`| \`${name}\` |`);
    }
    expect(diagram).toContain('safe_updates --> backups');
    expect(diagram).toContain('wordpress --> jobs');
    expect(diagram).not.toContain('dashboard --> users');
    expect(diagram).not.toContain('bulk_updates --> safe_updates');
    // Each feature sits in its tier's subgraph.
    const tiers = [...diagram.matchAll(/subgraph tier(\d)[^\n]*\n([\s\S]*?)\n {4}end/g)];
    expect(tiers.map((match) => match[1])).toEqual(['5', '4', '3', '2', '1']);
    for (const [, tier, body] of tiers) {
      const inTier = MODULES.filter((m) => m.layer === 'feature' && String(m.tier) === tier);
      expect(body!.trim().split('\n').length, `tier ${tier}`).toBe(inTier.length);
      for (const m of inTier) expect(body, m.name).toContain(`["${m.name.replace(/\/$/, '')}"]`);
    }
  });

  it('builds dependency-cruiser’s rules from the same list: each module in its layer, each feature in its tier', () => {
    const layers = ['base', 'feature', 'composition'] as const;
    const patterns = rule('unknown-module').from.pathNot as string[];
    expect(patterns).toHaveLength(3);
    for (const { name, layer } of MODULES) {
      const matching = patterns.map((pattern, i) => (new RegExp(pattern).test(pathIn(name)) ? layers[i] : null));
      expect(matching.filter(Boolean), name).toEqual([layer]);
    }
    expect(MODULES.find((m) => m.name === 'dashboard/')?.layer).toBe('composition');
    expect(new RegExp(patterns.join('|')).test('src/reports/a.ts')).toBe(false);

    const features = MODULES.filter((m) => m.layer === 'feature');
    for (const from of features) {
      const rules = forbidden.filter(
        (r) => r.name.startsWith('tier-') && new RegExp(r.from.path!).test(pathIn(from.name)),
      );
      expect(
        rules.map((r) => r.name),
        from.name,
      ).toEqual([expect.stringMatching(new RegExp(`^tier-${from.tier}-`))]);
      for (const to of features.filter((m) => m !== from)) {
        const forbiddenImport = new RegExp(rules[0]!.to.path!).test(pathIn(to.name));
        expect(forbiddenImport, `${from.name} → ${to.name}`).toBe(to.tier! >= from.tier!);
      }
    }
  });
});
