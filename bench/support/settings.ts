/** A BENCH_* setting: a positive whole number, or its default when unset or empty. */
export function wholeSetting(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number, not ${raw}`);
  return value;
}
