import { updateProblems } from '../inventory/index.js';

export const wordpressUpdatesProblems = {
  versionNotOffered: updateProblems.versionNotOffered,
  noUpdate: updateProblems.noUpdate,
  operationFailed: updateProblems.operationFailed,
};
