// Counts imports that cross the layering the wrong way (issue 14): base → feature or composition,
// feature → composition, sites → any other feature, and feature → feature edges inside a cycle.
// Also counts feature → feature imports that bypass the other feature's index.ts.
// Usage: node scripts/upward-imports.mjs [--list]
import console from 'node:console';
import process from 'node:process';
import { cruise } from 'dependency-cruiser';

const BASE = new Set(['shared', 'db', 'http', 'wordpress', 'jobs', 'metrics', 'config']);
const COMPOSITION_FILES = new Set(['main', 'services', 'cli', 'scheduled-work', 'app', 'config', 'schema']);

function place(path) {
  const [, first, ...rest] = path.split('/');
  if (rest.length === 0) {
    const name = first.replace(/\.ts$/, '');
    if (name === 'version') return { layer: 'base', module: 'version' };
    return { layer: COMPOSITION_FILES.has(name) ? 'composition' : 'unknown', module: name };
  }
  return { layer: BASE.has(first) ? 'base' : 'feature', module: first };
}

const { output } = await cruise(['src'], {
  tsPreCompilationDeps: true,
  tsConfig: { fileName: 'tsconfig.json' },
  includeOnly: '^src/',
});
const edges = [];
for (const m of output.modules) {
  for (const d of m.dependencies) {
    if (!d.resolved.startsWith('src/')) continue;
    edges.push({ from: m.source, to: d.resolved });
  }
}

const featureGraph = new Map();
for (const { from, to } of edges) {
  const a = place(from);
  const b = place(to);
  if (a.layer === 'feature' && b.layer === 'feature' && a.module !== b.module) {
    if (!featureGraph.has(a.module)) featureGraph.set(a.module, new Set());
    featureGraph.get(a.module).add(b.module);
  }
}
const reaches = (start, goal, seen = new Set()) => {
  for (const next of featureGraph.get(start) ?? []) {
    if (next === goal) return true;
    if (!seen.has(next)) {
      seen.add(next);
      if (reaches(next, goal, seen)) return true;
    }
  }
  return false;
};

const rank = { base: 0, feature: 1, composition: 2, unknown: 2 };
const upward = [];
const internals = [];
for (const edge of edges) {
  const a = place(edge.from);
  const b = place(edge.to);
  if (a.module === b.module) continue;
  let why = null;
  if (rank[b.layer] > rank[a.layer]) why = `${a.layer} → ${b.layer}`;
  else if (a.layer === 'feature' && b.layer === 'feature') {
    if (a.module === 'sites') why = 'sites → another feature';
    else if (reaches(b.module, a.module)) why = `feature cycle ${a.module} ↔ ${b.module}`;
    if (!edge.to.endsWith('/index.ts')) internals.push(edge);
  }
  if (why) upward.push({ ...edge, why });
}

const fileGraph = new Map();
for (const { from, to } of edges) {
  if (!fileGraph.has(from)) fileGraph.set(from, new Set());
  fileGraph.get(from).add(to);
}
const fileReaches = (start, goal) => {
  const seen = new Set([start]);
  const stack = [start];
  while (stack.length > 0) {
    for (const next of fileGraph.get(stack.pop()) ?? []) {
      if (next === goal) return true;
      if (!seen.has(next)) {
        seen.add(next);
        stack.push(next);
      }
    }
  }
  return false;
};
const fileCycles = edges.filter(({ from, to }) => fileReaches(to, from));

if (process.argv.includes('--list')) {
  for (const e of fileCycles) console.log(`cycle    ${e.from} → ${e.to}`);
  for (const e of upward) console.log(`upward   ${e.from} → ${e.to}  (${e.why})`);
  for (const e of internals) console.log(`internal ${e.from} → ${e.to}`);
}
console.log(`${edges.length} imports between src modules`);
console.log(`${upward.length} upward imports`);
console.log(`${fileCycles.length} imports inside a file-level cycle`);
console.log(`${internals.length} feature → feature imports not through the other feature's index.ts`);
