/**
 * Self time of a CPU profile (.cpuprofile) by where the code lives: the daemon's own folders under
 * src/, each dependency under node_modules, Node's internals, the garbage collector.
 *
 *   node --import tsx bench/lab/profile-summary.ts file.cpuprofile [top functions, default 25]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
const [file, top = '25'] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file!, 'utf8')) as {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
};
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const place = ({ url, functionName }: ProfileNode['callFrame']) => {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const module = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (module) return module[1]!;
  const own = /\/(src|bench|test)\/(.*\/)?/.exec(url);
  if (own) return `${own[1]}/${own[2] ?? ''}`;
  return url.startsWith('node:') ? 'node internals' : url;
};
const places = new Map<string, number>();
const functions = new Map<string, number>();
let total = 0;
profile.samples.forEach((id, index) => {
  const frame = byId.get(id)!.callFrame;
  const micros = profile.timeDeltas[index] ?? 0;
  if (frame.functionName === '(idle)') return;
  total += micros;
  places.set(place(frame), (places.get(place(frame)) ?? 0) + micros);
  const name = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/.*\/(node_modules|src)\//, '$1/')}:${frame.lineNumber + 1}`;
  functions.set(name, (functions.get(name) ?? 0) + micros);
});
const show = (map: Map<string, number>, limit: number) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .forEach(([name, micros]) =>
      console.log(
        `${(micros / 1000).toFixed(1).padStart(8)} ms ${((100 * micros) / total).toFixed(1).padStart(5)} %  ${name}`,
      ),
    );
console.log(`busy ${(total / 1000).toFixed(1)} ms (idle left out)\n\nby place:`);
show(places, 30);
console.log('\nby function (self time):');
show(functions, Number(top));
