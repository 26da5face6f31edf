#!/usr/bin/env node
/**
 * Writes the layer section of docs/architecture.md (between `<!-- layers:start -->` and
 * `<!-- layers:end -->`): a table a layer and the module diagram, from scripts/layers.cjs (which
 * module is in which layer and tier, the same list `.dependency-cruiser.cjs` builds its rules from)
 * and from the imports src/ has today (the diagram's arrows inside a layer); and the tables kept or
 * guarded by SQLite triggers, from their declarations (the `*.triggers.ts` files of src/, which
 * test/db/table-triggers.test.ts holds equal to the migrated database): a table of them and, in the
 * diagram, a dotted arrow from each module whose table the triggers watch to the table they keep.
 *
 *   npm run docs:architecture              rewrite the section
 *   npm run docs:architecture -- --check   exit 1 when the committed section differs
 *
 * Fails, naming it, on a folder or top-level file of src/ that scripts/layers.cjs gives no layer,
 * and on a module there that src/ no longer has. test/architecture-doc.test.ts runs the check.
 */
import console from 'node:console';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import process from 'node:process';
import { fileURLToPath, pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
const { LAYERS, MODULES, TIERS, moduleOf } = require('./layers.cjs');

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const PAGE = 'docs/architecture.md';
const START = '<!-- layers:start -->';
const END = '<!-- layers:end -->';

/**
 * The modules src/ holds (`sites/`, `main.ts`), checked against scripts/layers.cjs both ways.
 * @param {string[]} entries the names of src/'s folders (with their slash) and top-level files
 * @returns {string[]} what is wrong, one sentence each; empty when every entry has a layer and every layer's module exists
 */
export function layerProblems(entries) {
  const problems = [];
  for (const entry of entries) {
    if (!MODULES.some((m) => m.name === entry))
      problems.push(
        `src/${entry} has no layer: name it in scripts/layers.cjs (base, feature with its tier, or composition).`,
      );
  }
  for (const m of MODULES) {
    if (!entries.includes(m.name)) problems.push(`scripts/layers.cjs names src/${m.name}, which src/ does not have.`);
    if (m.layer === 'feature' && !(m.name.endsWith('/') && Number.isInteger(m.tier)))
      problems.push(`scripts/layers.cjs: the feature ${m.name} must be a folder with a tier.`);
  }
  return problems;
}

/** The folders (with their slash) and top-level files of src/. */
export function srcEntries(root = ROOT) {
  return readdirSync(join(root, 'src'))
    .map((name) => (statSync(join(root, 'src', name)).isDirectory() ? `${name}/` : name))
    .sort();
}

/**
 * The imports between modules of src/ today, as module names (`safe-updates/` → `backups/`), found by
 * dependency-cruiser with the options `npm run lint` uses.
 * @returns {Promise<Array<[string, string]>>}
 */
export async function moduleImports(root = ROOT) {
  const { cruise } = await import('dependency-cruiser');
  const { options } = require(join(root, '.dependency-cruiser.cjs'));
  const here = process.cwd();
  process.chdir(root);
  try {
    const { output } = await cruise(['src'], { ...options, ruleSet: undefined });
    const pairs = new Map();
    for (const m of output.modules) {
      for (const d of m.dependencies) {
        if (!m.source.startsWith('src/') || !d.resolved.startsWith('src/')) continue;
        const from = moduleOf(m.source).name;
        const to = moduleOf(d.resolved).name;
        if (from !== to) pairs.set(`${from} ${to}`, [from, to]);
      }
    }
    return [...pairs.values()];
  } finally {
    process.chdir(here);
  }
}

/**
 * The tables SQLite triggers keep or guard, as their `*.triggers.ts` files declare them (each file's
 * one export; see src/db/table-triggers.ts), ordered by file.
 * @returns {Promise<Array<{ table: string, module: string, what: string, views: Array<{ name: string }>, triggers: Array<{ name: string, on: string, onModule: string }> }>>}
 */
export async function triggerDeclarations(root = ROOT) {
  const { tsImport } = await import('tsx/esm/api');
  const files = readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.triggers.ts'))
    .sort();
  const declarations = [];
  for (const file of files) {
    const exports = Object.values(await tsImport(pathToFileURL(join(root, 'src', file)).href, import.meta.url));
    if (exports.length !== 1) throw new Error(`src/${file} must export one declaration of its table's triggers.`);
    declarations.push(exports[0]);
  }
  return declarations;
}

const label = (m) => m.name.replace(/\/$/, '');
const id = (m) => label(m).replace(/[^a-z0-9]+/gi, '_');
const cell = (text) => text.replace(/\|/g, '\\|');

/** The triggers of a declaration, grouped by the table they watch: `uptime_hourly` (`uptime/`): `a`, `b`. */
function watched(declaration) {
  const byTable = new Map();
  for (const t of declaration.triggers) {
    const key = `\`${t.on}\` (\`${t.onModule}\`)`;
    byTable.set(key, [...(byTable.get(key) ?? []), `\`${t.name}\``]);
  }
  const views = declaration.views.map((v) => `\`${v.name}\``);
  return [
    ...[...byTable].map(([table, names]) => `${table}: ${names.join(', ')}`),
    ...(views.length > 0 ? [`views read: ${views.join(', ')}`] : []),
  ].join('; ');
}

/**
 * The section, from scripts/layers.cjs, the imports between modules and the triggers' declarations.
 * @param {Array<[string, string]>} imports module → module, as `moduleImports` gives them
 * @param {Awaited<ReturnType<typeof triggerDeclarations>>} [triggers] as `triggerDeclarations` gives them
 */
export function layerSection(imports, triggers = []) {
  const byName = new Map(MODULES.map((m) => [m.name, m]));
  const inLayer = (layer) => MODULES.filter((m) => m.layer === layer);
  const features = inLayer('feature').sort((a, b) => a.tier - b.tier);
  const lines = [
    START,
    '<!-- Written by `npm run docs:architecture` from scripts/layers.cjs and the imports in src/: edit those, not this section. -->',
    '',
    LAYERS.base,
    '',
    '| module | what it holds |',
    '|---|---|',
    ...inLayer('base').map((m) => `| \`${m.name}\` | ${cell(m.what)} |`),
    '',
    LAYERS.feature,
    '',
    '| tier | module | what it does |',
    '|---|---|---|',
    ...features.map((m) => `| ${m.tier} | \`${m.name}\` | ${cell(m.what)} |`),
    '',
    LAYERS.composition,
    '',
    '| module | what it does |',
    '|---|---|',
    ...inLayer('composition').map((m) => `| \`${m.name}\` | ${cell(m.what)} |`),
    '',
    ...(triggers.length === 0
      ? []
      : [
          '**Tables kept by SQLite triggers**: read models the features’ writes keep current in the same transaction,',
          'whatever code path writes, and guards. A coupling no import shows: each table’s triggers, and the views',
          'they read, are declared next to it in a `*.triggers.ts` file, the source of truth the hand-written',
          'migrations must match (test/db/table-triggers.test.ts compares them with the migrated database).',
          '',
          '| table | module | what it holds | kept by triggers on (module): triggers |',
          '|---|---|---|---|',
          ...triggers.map((d) => `| \`${d.table}\` | \`${d.module}\` | ${cell(d.what)} | ${cell(watched(d))} |`),
          '',
        ]),
    '## Module diagram',
    '',
    'Every module of `src/`, in its layer and, for a feature, its tier. An arrow inside a layer is an import that',
    'exists today (between features, through the other feature’s `index.ts`); the two arrows between the layers',
    'stand for all the imports from one layer into the one below. A dotted arrow is a coupling through the',
    'database: writes to the module’s tables (named on the arrow) fire triggers that keep (or guard) the table it points to.',
    '',
    '```mermaid',
    'flowchart TD',
  ];
  const node = (m) => `${id(m)}["${label(m)}"]`;
  const arrows = (layer) =>
    imports
      .map(([from, to]) => [byName.get(from), byName.get(to)])
      .filter(([from, to]) => from?.layer === layer && to?.layer === layer)
      .sort(([a, b], [c, d]) => MODULES.indexOf(a) - MODULES.indexOf(c) || MODULES.indexOf(b) - MODULES.indexOf(d))
      .map(([from, to]) => `    ${id(from)} --> ${id(to)}`);
  lines.push(
    '  subgraph composition',
    ...inLayer('composition').map((m) => `    ${node(m)}`),
    ...arrows('composition'),
  );
  lines.push('  end', '  subgraph features');
  for (const tier of [...TIERS].reverse()) {
    lines.push(`    subgraph tier${tier}["tier ${tier}"]`);
    lines.push(...features.filter((m) => m.tier === tier).map((m) => `      ${node(m)}`), '    end');
  }
  lines.push(...arrows('feature'), '  end', '  subgraph base', ...inLayer('base').map((m) => `    ${node(m)}`));
  lines.push(...arrows('base'), '  end');
  if (triggers.length > 0) {
    const tableId = (table) => `table_${table}`;
    lines.push('  subgraph tables["tables kept by triggers"]');
    lines.push(
      ...triggers.map((d) => `    ${tableId(d.table)}[("${d.table} · ${label({ name: d.module })}")]`),
      '  end',
    );
    for (const d of triggers) {
      const byModule = new Map();
      for (const t of d.triggers) {
        const tables = byModule.get(t.onModule) ?? new Set();
        byModule.set(t.onModule, tables.add(t.on));
      }
      for (const [module, tables] of byModule) {
        if (!byName.has(module))
          throw new Error(`${d.table}'s triggers watch tables of ${module}, which has no layer.`);
        lines.push(`  ${id(byName.get(module))} -.->|"${[...tables].join(', ')}"| ${tableId(d.table)}`);
      }
    }
  }
  lines.push('  composition --> features', '  features --> base', '```', END);
  return lines.join('\n');
}

/** The page with its section replaced. */
export function withSection(page, section) {
  const start = page.indexOf(START);
  const end = page.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${PAGE} has no ${START} … ${END} section.`);
  return page.slice(0, start) + section + page.slice(end + END.length);
}

async function main() {
  const problems = layerProblems(srcEntries());
  if (problems.length > 0) {
    for (const problem of problems) console.error(problem);
    process.exit(1);
  }
  const path = join(ROOT, PAGE);
  const page = readFileSync(path, 'utf8');
  const wanted = withSection(page, layerSection(await moduleImports(), await triggerDeclarations()));
  if (process.argv.includes('--check')) {
    if (wanted !== page) {
      console.error(
        `${PAGE}'s layer section is not what scripts/layers.cjs and src/ give: run npm run docs:architecture.`,
      );
      process.exit(1);
    }
  } else if (wanted !== page) {
    writeFileSync(path, wanted);
    console.log(`wrote ${PAGE}`);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
