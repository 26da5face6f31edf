import { createRoute, OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../http/auth.js';
import { jsonContent, problemResponses } from '../http/openapi.js';
import { decodeCursor, pageSchema, PaginationQuery, toPage } from '../http/pagination.js';
import { SiteIdPathParam } from '../sites/index.js';
import type { SitePlan } from './policy-evaluation.js';
import type { UpdateHold } from './update-holds.repository.js';
import type { StoredPolicy } from './update-policies.repository.js';
import {
  CreatePolicyInput,
  HoldIdParam,
  HoldListQuery,
  HoldSchema,
  PolicyIdParam,
  PolicySchema,
  PreviewSchema,
  SitePreviewSchema,
  UpdatePolicyInput,
} from './update-policies.schemas.js';
import type { UpdatePoliciesService } from './update-policies.service.js';

const tags = ['Update policies'];
const PRECEDENCE =
  'A site’s own policy wins over tag policies (even when disabled, which keeps the site out of them); among the policies of a site’s tags, the highest `priority` wins, then the one created first. The winning policy applies whole: policies are not merged.';

const jsonBody = <T extends typeof CreatePolicyInput | typeof UpdatePolicyInput>(schema: T) => ({
  required: true,
  content: { 'application/json': { schema } },
});

const policyView = ({ settings, createdAt, updatedAt, ...policy }: StoredPolicy) => ({
  ...policy,
  ...settings,
  createdAt: createdAt.toISOString(),
  updatedAt: updatedAt.toISOString(),
});

const routes = {
  list: createRoute({
    method: 'get',
    path: '/update-policies',
    operationId: 'listUpdatePolicies',
    tags,
    summary: 'Update policies',
    description: `Every policy, oldest first. ${PRECEDENCE}`,
    responses: {
      200: jsonContent(pageSchema(PolicySchema, 'UpdatePolicyList'), 'Every policy (one page)'),
      ...problemResponses(),
    },
  }),
  create: createRoute({
    method: 'post',
    path: '/update-policies',
    operationId: 'createUpdatePolicy',
    tags,
    summary: 'Add an update policy',
    description: `For one site (\`siteId\`) or one tag (\`tag\`): which kinds of update apply by themselves, in which weekly window (the site’s time zone), after which release delay, with pins and an ignore list. The minute tick starts a bulk update for each site whose window is open and has updates due, once per window; a window that closes stops starting sites (running ones finish). ${PRECEDENCE}`,
    request: { body: jsonBody(CreatePolicyInput) },
    responses: { 201: jsonContent(PolicySchema, 'The policy'), ...problemResponses(400, 403, 404, 409, 413, 415) },
  }),
  get: createRoute({
    method: 'get',
    path: '/update-policies/{id}',
    operationId: 'getUpdatePolicy',
    tags,
    summary: 'One update policy',
    request: { params: PolicyIdParam },
    responses: { 200: jsonContent(PolicySchema, 'The policy'), ...problemResponses(404) },
  }),
  replace: createRoute({
    method: 'put',
    path: '/update-policies/{id}',
    operationId: 'replaceUpdatePolicy',
    tags,
    summary: 'Change an update policy',
    description: 'The whole policy again (fields left out take their defaults); its site or tag stays.',
    request: { params: PolicyIdParam, body: jsonBody(UpdatePolicyInput) },
    responses: { 200: jsonContent(PolicySchema, 'The policy now'), ...problemResponses(400, 403, 404, 413, 415) },
  }),
  delete: createRoute({
    method: 'delete',
    path: '/update-policies/{id}',
    operationId: 'deleteUpdatePolicy',
    tags,
    summary: 'Remove an update policy',
    description: 'Runs it already started finish.',
    request: { params: PolicyIdParam },
    responses: { 204: { description: 'Removed' }, ...problemResponses(403, 404) },
  }),
  preview: createRoute({
    method: 'get',
    path: '/update-policies/{id}/preview',
    operationId: 'previewUpdatePolicy',
    tags,
    summary: 'What the policy would do in its next window',
    description:
      'A dry run from the inventory (no site is asked): for each site the policy governs, a page at a time by site id, the window open now or else the next one, the updates it would apply then (release delays judged at the moment that window opens) and what it skips and why (`kind-off`, `ignored`, `held`: a version a safe update rolled back on the site, with its `hold`; `pinned`, `release-delay`).',
    request: { params: PolicyIdParam, query: PaginationQuery },
    responses: {
      200: jsonContent(PreviewSchema, 'The plan'),
      ...problemResponses(400, 404),
    },
  }),
  sitePreview: createRoute({
    method: 'get',
    path: '/sites/{siteId}/update-policy',
    operationId: 'previewSiteUpdatePolicy',
    tags,
    summary: 'The update policy of one site, and what it would do',
    description: `Which policy governs the site, and the same dry run as \`/update-policies/{id}/preview\` for it alone. ${PRECEDENCE}`,
    request: { params: SiteIdPathParam },
    responses: { 200: jsonContent(SitePreviewSchema, 'The policy and plan'), ...problemResponses(404) },
  }),
  holds: createRoute({
    method: 'get',
    path: '/update-policies/holds',
    operationId: 'listUpdateHolds',
    tags,
    summary: 'Versions held after a rollback',
    description:
      'When a safe update rolls a version back on a site (`update.rolled-back`, `update.rollback-failed`), that version is held there: update policies skip it on that site (a newer version applies as usual) until the hold is released. Newest first.',
    request: { query: HoldListQuery.extend(PaginationQuery.shape) },
    responses: {
      200: jsonContent(pageSchema(HoldSchema, 'UpdateHoldList'), 'The holds (one page)'),
      ...problemResponses(400),
    },
  }),
  releaseHold: createRoute({
    method: 'post',
    path: '/update-policies/holds/{id}/release',
    operationId: 'releaseUpdateHold',
    tags,
    summary: 'Release a held version',
    description:
      'Policies apply the version on the site again, from their next window (or the next tick of one open now). Records who released it (`update_policy.hold_released`).',
    request: { params: HoldIdParam },
    responses: { 200: jsonContent(HoldSchema, 'The released hold'), ...problemResponses(403, 404, 409) },
  }),
};

const span = (s: { start: Date; end: Date }) => ({ start: s.start.toISOString(), end: s.end.toISOString() });

const NOT_RELEASED = { releasedAt: null, releasedBy: null };

const holdView = ({ heldAt, releasedAt, ...hold }: UpdateHold) => ({
  ...hold,
  heldAt: heldAt.toISOString(),
  releasedAt: releasedAt?.toISOString() ?? null,
});

const planView = (plan: SitePlan & { window: { start: Date; end: Date }; url: string; alreadyRun: boolean }) => ({
  siteId: plan.siteId,
  url: plan.url,
  policyId: plan.policyId,
  timeZone: plan.timeZone,
  timeZoneSource: plan.timeZoneSource,
  window: span(plan.window),
  windowOpen: plan.openWindow !== null,
  nextWindow: span(plan.nextWindow),
  updates: plan.updates,
  skipped: plan.skipped.map(({ hold, ...s }) => ({
    ...s,
    eligibleAt: s.eligibleAt?.toISOString() ?? null,
    ...(hold ? { hold: holdView({ ...hold, siteId: plan.siteId, ...NOT_RELEASED }) } : {}),
  })),
  alreadyRun: plan.alreadyRun,
});

/**
 * /api/update-policies: CRUD, the dry run and the holds; the service does the work. The holds'
 * routes come before `/update-policies/{id}`, which would take `holds` for an id.
 */
export function createUpdatePoliciesRoutes({ updatePolicies }: { updatePolicies: UpdatePoliciesService }) {
  return new OpenAPIHono<AppEnv>()
    .openapi(routes.list, async (c) =>
      c.json({ items: (await updatePolicies.list()).map(policyView), nextCursor: null }, 200),
    )
    .openapi(routes.holds, async (c) => {
      const { limit, cursor, siteId, state } = c.req.valid('query');
      const holds = await updatePolicies.holds.list({ siteId, state, limit, before: decodeCursor(cursor) });
      const page = toPage(holds, limit);
      return c.json({ items: page.items.map(holdView), nextCursor: page.nextCursor }, 200);
    })
    .openapi(routes.releaseHold, async (c) =>
      c.json(holdView(await updatePolicies.holds.release(c.req.valid('param').id, c.get('actor'))), 200),
    )
    .openapi(routes.create, async (c) => c.json(policyView(await updatePolicies.create(c.req.valid('json'))), 201))
    .openapi(routes.get, async (c) => c.json(policyView(await updatePolicies.get(c.req.valid('param').id)), 200))
    .openapi(routes.replace, async (c) =>
      c.json(policyView(await updatePolicies.replace(c.req.valid('param').id, c.req.valid('json'))), 200),
    )
    .openapi(routes.delete, async (c) => {
      await updatePolicies.remove(c.req.valid('param').id);
      return c.body(null, 204);
    })
    .openapi(routes.preview, async (c) => {
      const { limit, cursor } = c.req.valid('query');
      const { policy, at, plans } = await updatePolicies.preview(c.req.valid('param').id, {
        limit,
        after: decodeCursor(cursor),
      });
      const page = toPage(plans, limit, (plan) => plan.siteId);
      return c.json(
        { policyId: policy.id, at: at.toISOString(), sites: page.items.map(planView), nextCursor: page.nextCursor },
        200,
      );
    })
    .openapi(routes.sitePreview, async (c) => {
      const { at, policy, plan } = await updatePolicies.previewSite(c.req.valid('param').siteId);
      return c.json(
        {
          at: at.toISOString(),
          policyId: policy?.id ?? null,
          enabled: policy?.settings.enabled ?? null,
          plan: plan ? planView(plan) : null,
        },
        200,
      );
    });
}
