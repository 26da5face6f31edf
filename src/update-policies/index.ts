// The update-policies feature's door: automatic updates per site or tag, in maintenance windows.
export { createUpdatePoliciesRepository } from './update-policies.repository.js';
export { createUpdatePoliciesRoutes } from './update-policies.routes.js';
export {
  createUpdatePoliciesService,
  type ApplyUpdates,
  type UpdatePoliciesService,
} from './update-policies.service.js';
/** The API's request bodies, which the dashboard's policy form validates against too. */
export { CreatePolicyInput, UpdatePolicyInput } from './update-policies.schemas.js';
