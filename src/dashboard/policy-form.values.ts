import type { DashboardServices } from './deps.js';

/**
 * The update-policy form's values: a stored policy's, or what was posted (kept as typed when it was
 * refused), turned into the update policies' input, and its problems back onto the fields.
 */

export type Policy = Awaited<ReturnType<DashboardServices['updatePolicies']['get']>>;
type Form = Record<string, string | File | (string | File)[]>;
/** Field name → the first problem with it; `form` for what concerns the whole form. */
export type Errors = Record<string, string>;

export const DAYS = [
  ['mon', 'Monday'],
  ['tue', 'Tuesday'],
  ['wed', 'Wednesday'],
  ['thu', 'Thursday'],
  ['fri', 'Friday'],
  ['sat', 'Saturday'],
  ['sun', 'Sunday'],
] as const;
export const KINDS = [
  ['plugins', 'Plugins'],
  ['themes', 'Themes'],
  ['translations', 'Translations'],
  ['coreMinor', 'WordPress maintenance releases (6.5.3 → 6.5.5)'],
  ['coreMajor', 'WordPress feature releases (6.5 → 6.6)'],
] as const;
const MAX_LINES = 500;

/** What the form shows: a stored policy, or what was posted (kept as typed when it was refused). */
export interface Values {
  name: string;
  scope: 'site' | 'tag';
  siteId: string;
  tag: string;
  priority: string;
  enabled: boolean;
  kinds: Set<string>;
  days: Set<string>;
  start: string;
  end: string;
  timeZone: string;
  releaseDelayDays: string;
  safe: boolean;
  /** The safe updates' visual check: on, the threshold in % of a page's pixels, and rolling back beyond it. */
  visual: boolean;
  visualThreshold: string;
  visualRollback: boolean;
  pins: string;
  ignore: string;
}

export const EMPTY: Values = {
  name: '',
  scope: 'tag',
  siteId: '',
  tag: '',
  priority: '0',
  enabled: true,
  kinds: new Set(['plugins', 'themes', 'translations', 'coreMinor']),
  days: new Set(['mon', 'tue', 'wed', 'thu', 'fri']),
  start: '02:00',
  end: '05:00',
  timeZone: '',
  releaseDelayDays: '0',
  safe: true,
  visual: true,
  visualThreshold: '3',
  // Unattended: a page that changed beyond the threshold is rolled back by default.
  visualRollback: true,
  pins: '',
  ignore: '',
};

export function valuesOf(policy: Policy): Values {
  const s = policy.settings;
  return {
    name: policy.name,
    scope: policy.siteId ? 'site' : 'tag',
    siteId: policy.siteId ?? '',
    tag: policy.tag ?? '',
    priority: String(policy.priority),
    enabled: s.enabled,
    kinds: new Set(Object.entries(s.kinds).flatMap(([kind, on]) => (on ? [kind] : []))),
    days: new Set(s.window.days),
    start: s.window.start,
    end: s.window.end,
    timeZone: s.window.timeZone ?? '',
    releaseDelayDays: String(s.releaseDelayDays),
    safe: s.safe,
    visual: s.checks.visual.enabled,
    visualThreshold: String(Number((s.checks.visual.threshold * 100).toFixed(4))),
    visualRollback: s.checks.visual.rollback,
    pins: s.pins.map((pin) => `${pin.type} ${pin.slug} ${pin.version}`).join('\n'),
    ignore: s.ignore.map((item) => `${item.type} ${item.slug}`).join('\n'),
  };
}

export function postedValues(form: Form): Values {
  const one = (name: string) => {
    const value = form[name];
    return typeof value === 'string' ? value.trim().slice(0, 20_000) : '';
  };
  const many = (name: string) =>
    new Set(([] as unknown[]).concat(form[name] ?? []).filter((v): v is string => typeof v === 'string'));
  return {
    name: one('name'),
    scope: one('scope') === 'site' ? 'site' : 'tag',
    siteId: one('siteId'),
    tag: one('tag').toLowerCase(),
    priority: one('priority'),
    enabled: one('enabled') === '1',
    kinds: many('kinds'),
    days: many('days'),
    start: one('start'),
    end: one('end'),
    timeZone: one('timeZone'),
    releaseDelayDays: one('releaseDelayDays'),
    safe: one('safe') === '1',
    visual: one('visual') === '1',
    visualThreshold: one('visualThreshold'),
    visualRollback: one('visualRollback') === '1',
    pins: one('pins'),
    ignore: one('ignore'),
  };
}

const lines = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((parts) => parts[0] !== '')
    .slice(0, MAX_LINES);
const number = (text: string) => (text === '' ? undefined : Number(text));

/**
 * The request body the API would take, from the form (zod then says what is wrong, field by field); `checks` keeps
 * what the form does not show (URLs, keyword, timings set through the API) from the stored policy.
 */
export function inputOf(values: Values, stored?: Policy['settings']['checks']) {
  const threshold = number(values.visualThreshold);
  return {
    name: values.name,
    ...(values.scope === 'site' ? { siteId: values.siteId || undefined } : { tag: values.tag || undefined }),
    priority: number(values.priority),
    enabled: values.enabled,
    kinds: Object.fromEntries(KINDS.map(([kind]) => [kind, values.kinds.has(kind)])),
    window: {
      days: [...values.days],
      start: values.start,
      end: values.end,
      timeZone: values.timeZone === '' ? null : values.timeZone,
    },
    releaseDelayDays: number(values.releaseDelayDays),
    safe: values.safe,
    checks: {
      ...stored,
      visual: {
        enabled: values.visual,
        threshold: threshold === undefined ? undefined : threshold / 100,
        rollback: values.visualRollback,
      },
    },
    pins: lines(values.pins).map(([type, slug, version]) => ({ type, slug, version })),
    ignore: lines(values.ignore).map(([type, slug]) => ({ type, slug })),
  };
}

/** zod's issues as one message per form field: `window.start`, `pins` (with its line), … */
export function errorsOf(issues: { path: PropertyKey[]; message: string }[]): Errors {
  const errors: Errors = {};
  for (const issue of issues) {
    const [head, second] = issue.path.map(String);
    const field =
      head === 'window' && second
        ? second
        : head === 'checks'
          ? 'visualThreshold'
          : head === 'siteId' || head === 'tag'
            ? 'scope'
            : (head ?? 'form');
    const where = (head === 'pins' || head === 'ignore') && second !== undefined ? `line ${Number(second) + 1}: ` : '';
    errors[field] ??= `${where}${issue.message}`;
  }
  return errors;
}
