/**
 * Builds the URL of a REST route from the API root the site advertises. Sites with pretty
 * permalinks use `…/wp-json/`; others use `…/?rest_route=/`, where the route and its query
 * string have to be merged into one query.
 */
export function restRouteUrl(
  restUrl: string,
  route: string,
  query: Record<string, string | number | undefined> = {},
): string {
  const path = route.replace(/^\/+/, '');
  const root = new URL(restUrl);
  const params = Object.entries(query).filter((entry): entry is [string, string | number] => entry[1] !== undefined);
  if (root.searchParams.has('rest_route')) {
    const base = root.searchParams.get('rest_route')!.replace(/\/+$/, '');
    root.searchParams.set('rest_route', `${base}/${path}`);
    for (const [key, value] of params) root.searchParams.set(key, String(value));
    return root.toString();
  }
  const url = new URL(path, root.toString().endsWith('/') ? root : `${root.toString()}/`);
  for (const [key, value] of params) url.searchParams.set(key, String(value));
  return url.toString();
}
