import { updateProblems } from '../inventory/index.js';
import { defineProblem } from '../shared/errors.js';

export const wordpressUpdatesProblems = {
  versionNotOffered: defineProblem(
    'core-version-not-offered',
    409,
    'WordPress does not offer that version to the site',
  ),
  noUpdate: updateProblems.noUpdate,
  operationFailed: updateProblems.operationFailed,
};
