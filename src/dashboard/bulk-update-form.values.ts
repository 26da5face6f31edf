import { SafeUpdateChecksInput } from '../safe-updates/index.js';
import type { DashboardServices } from './deps.js';

/**
 * What the Updates page's bulk-update forms post, read back: the items, sites or tag the
 * checkboxes select (in the bulk-update request's shape, at most so many of each), and the apply
 * form's visual check fields as a safe bulk update's checks.
 */

type ItemType = NonNullable<Parameters<DashboardServices['bulkUpdates']['select']>[0]['items']>[number]['type'];

const ITEM_TYPES = new Set<string>(['plugin', 'theme', 'core', 'translations']);
const MAX_SELECTED = 1_000;
/** The form on the Updates page that the item and site checkboxes belong to (`form="bulk"`). */
export const BULK_FORM_ID = 'bulk';

/** The selection the Updates page's form names, in the bulk-update request's shape. */
export function selectionOf(form: Record<string, string | File | (string | File)[]>) {
  const list = (name: string) =>
    ([] as unknown[])
      .concat(form[name] ?? [])
      .filter((value): value is string => typeof value === 'string' && value !== '')
      .slice(0, MAX_SELECTED);
  const items = list('item').flatMap((value) => {
    const [type, slug] = value.split(':', 2);
    if (!type || !ITEM_TYPES.has(type)) return [];
    return [{ type: type as ItemType, ...(slug ? { slug: slug.slice(0, 200) } : {}) }];
  });
  const sites = list('site').map((id) => id.slice(0, 64));
  const tag = list('tag')[0]?.slice(0, 100);
  return {
    ...(sites.length > 0 ? { sites } : tag ? {} : { all: true as const }),
    tag: sites.length === 0 && tag ? [tag] : [],
    ...(items.length > 0 ? { items } : {}),
  };
}

/** The apply form's visual check fields as a bulk update's `checks` (null: a threshold that is not 0–100 %). */
export function checksOf(form: Record<string, string | File>) {
  const threshold = typeof form.threshold === 'string' && form.threshold.trim() !== '' ? Number(form.threshold) : 3;
  const parsed = SafeUpdateChecksInput.safeParse({
    visual: { enabled: form.visual === '1', threshold: threshold / 100, rollback: form.visualRollback === '1' },
  });
  return parsed.success ? parsed.data : null;
}
