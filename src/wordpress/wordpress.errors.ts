import { z } from 'zod';
import { defineProblem } from '../shared/errors.js';

export const wordpressProblems = {
  notWordPress: defineProblem('not-wordpress', 422, 'The address is not a WordPress site'),
  applicationPasswordsUnavailable: defineProblem(
    'application-passwords-unavailable',
    422,
    'Application passwords are not available on the site',
  ),
  credentialsRejected: defineProblem('credentials-rejected', 422, 'The site rejected the credentials'),
  insufficientCapabilities: defineProblem(
    'insufficient-capabilities',
    422,
    'The WordPress user lacks the capabilities Sitewarden needs',
  ),
  siteForbidden: defineProblem('site-refused', 422, 'The site refused the operation'),
  inventoryTooLarge: defineProblem(
    'site-inventory-too-large',
    502,
    'The site reports more plugins or themes than Sitewarden manages',
  ),
  siteError: defineProblem('site-error', 502, 'The site answered with an error'),
};

/** The error document WordPress's REST API answers with (checked: a site is untrusted). */
export const WordPressErrorBodySchema = z.object({
  code: z.string().optional(),
  message: z.string().optional(),
  data: z.object({ status: z.number().optional() }).nullish(),
});
export type WordPressErrorBody = z.infer<typeof WordPressErrorBodySchema>;
