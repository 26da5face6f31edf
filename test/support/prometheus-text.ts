/**
 * A strict parser of the Prometheus text exposition format (version 0.0.4): every sample must
 * belong to a family declared by `# TYPE` before it, names and labels must be well formed,
 * values must be numbers, histograms must have cumulative `_bucket`s ending at `le="+Inf"`
 * equal to `_count`. Throws on anything else, so a test fails on malformed output.
 */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const SUFFIXES: Record<Family['type'], string[]> = {
  counter: ['', '_total', '_created'],
  gauge: [''],
  histogram: ['_bucket', '_sum', '_count', '_created'],
  summary: ['', '_sum', '_count', '_created'],
  untyped: [''],
};

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const helps = new Map<string, string>();
  if (text.length > 0 && !text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  const lines = text.split('\n').slice(0, -1);
  lines.forEach((line, index) => {
    const where = `line ${index + 1} (${JSON.stringify(line)})`;
    if (line === '') return;
    if (line.startsWith('#')) {
      const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!meta) {
        if (/^# (HELP|TYPE)\b/.test(line)) throw new Error(`malformed ${where}`);
        return; // a comment
      }
      const [, kind, name, rest] = meta as unknown as [string, string, string, string];
      if (!NAME.test(name)) throw new Error(`bad metric name at ${where}`);
      if (kind === 'HELP') {
        if (helps.has(name)) throw new Error(`second HELP for ${name} at ${where}`);
        helps.set(name, unescapeHelp(rest));
        return;
      }
      if (families.has(name)) throw new Error(`second TYPE for ${name} at ${where}`);
      if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest))
        throw new Error(`unknown type at ${where}`);
      families.set(name, { name, type: rest as Family['type'], help: '', samples: [] });
      return;
    }
    const sample = parseSample(line, where);
    const family = familyOf(sample.name, families);
    if (!family) throw new Error(`sample of an undeclared family at ${where}`);
    family.samples.push(sample);
  });
  for (const family of families.values()) {
    family.help = helps.get(family.name) ?? '';
    if (family.type === 'histogram') checkHistogram(family);
  }
  return families;
}

function familyOf(sampleName: string, families: Map<string, Family>): Family | undefined {
  for (const family of families.values()) {
    for (const suffix of SUFFIXES[family.type]) if (sampleName === `${family.name}${suffix}`) return family;
  }
  return undefined;
}

function parseSample(line: string, where: string): Sample {
  const head = /^([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(line);
  if (!head) throw new Error(`bad sample name at ${where}`);
  const name = head[1]!;
  let rest = line.slice(name.length);
  const labels: Record<string, string> = {};
  if (rest.startsWith('{')) {
    rest = rest.slice(1);
    while (!rest.startsWith('}')) {
      const label = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,?)/.exec(rest);
      if (!label || !LABEL_NAME.test(label[1]!)) throw new Error(`bad label at ${where}`);
      if (label[1]! in labels) throw new Error(`repeated label ${label[1]} at ${where}`);
      labels[label[1]!] = label[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
      rest = rest.slice(label[0].length);
      if (label[3] !== ',' && !rest.startsWith('}')) throw new Error(`labels not separated at ${where}`);
    }
    rest = rest.slice(1);
  }
  const value = /^ (\S+)( -?\d+)?$/.exec(rest);
  if (!value) throw new Error(`bad value at ${where}`);
  return { name, labels, value: parseFloatLikeGo(value[1]!, where) };
}

/** Prometheus reads values with Go's strconv.ParseFloat: Inf and NaN in any case (prom-client writes `Nan`). */
function parseFloatLikeGo(raw: string, where: string): number {
  const special = /^([+-]?)(inf|infinity|nan)$/i.exec(raw);
  if (special) return special[2]!.toLowerCase() === 'nan' ? NaN : special[1] === '-' ? -Infinity : Infinity;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(raw)) throw new Error(`value is not a number at ${where}`);
  return Number(raw);
}

function unescapeHelp(text: string): string {
  return text.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
}

function checkHistogram(family: Family): void {
  const series = new Map<string, { buckets: { le: number; value: number }[]; count?: number; sum?: number }>();
  const keyOf = (labels: Record<string, string>) =>
    JSON.stringify(
      Object.entries(labels)
        .filter(([name]) => name !== 'le')
        .sort(),
    );
  for (const sample of family.samples) {
    const key = keyOf(sample.labels);
    const entry = series.get(key) ?? { buckets: [] };
    series.set(key, entry);
    if (sample.name.endsWith('_bucket')) {
      if (sample.labels.le === undefined) throw new Error(`${family.name}: a bucket without le`);
      entry.buckets.push({ le: parseFloatLikeGo(sample.labels.le, `${family.name} le`), value: sample.value });
    } else if (sample.name.endsWith('_count')) entry.count = sample.value;
    else if (sample.name.endsWith('_sum')) entry.sum = sample.value;
  }
  for (const [key, entry] of series) {
    const last = entry.buckets.at(-1);
    if (!last || last.le !== Infinity) throw new Error(`${family.name} ${key}: buckets must end with le="+Inf"`);
    if (entry.count !== last.value || entry.sum === undefined)
      throw new Error(`${family.name} ${key}: _count must equal the +Inf bucket, and _sum must be there`);
    entry.buckets.reduce(
      (previous, bucket) => {
        if (bucket.le <= previous.le || bucket.value < previous.value)
          throw new Error(`${family.name} ${key}: buckets must be sorted and cumulative`);
        return bucket;
      },
      { le: -Infinity, value: 0 },
    );
  }
}

/** The value of the one sample of `name` with exactly these labels (or 0 when there is none yet). */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  for (const family of families.values()) {
    const sample = family.samples.find(
      (s) =>
        s.name === name &&
        JSON.stringify(Object.entries(s.labels).sort()) === JSON.stringify(Object.entries(labels).sort()),
    );
    if (sample) return sample.value;
  }
  return 0;
}
