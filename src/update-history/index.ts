// The update history: one row per attempt to update one item on one site, whoever asked. Plugins,
// themes, core and safe updates record into it (the recorder); bulk updates read it and record
// their own items; a plain update's entry is rolled back from its restore point (createHistoryRollback).
export {
  updateHistory,
  updateItemTypes,
  updateResults,
  triggerKinds,
  type UpdateHistoryRow,
  type UpdateItemType,
  type TriggerKind,
} from './update-history.table.js';
// The bulk updates read the attempts of their sites on either dialect.
export { updateHistory as pgUpdateHistory } from './update-history.pg-table.js';
export {
  createUpdateHistoryRepository,
  type UpdateHistoryRepository,
  type HistoryFilter,
  type AttemptEnd,
} from './update-history.repository.js';
export {
  createUpdateRecorder,
  isNothingToUpdate,
  reasonOf,
  messageOf,
  type UpdateRecorder,
  type BatchedRecorder,
  type UpdateAttempt,
} from './update-recorder.js';
export { createHistoryRollback, restorePointOf } from './update-history.rollback.js';
export { updateHistoryProblems, notKeptProblem } from './update-history.errors.js';
export type { RestorePoints, RestorePointRef, PlainRestorePoint } from './restore-points.js';
export { createSingleSiteRecording, type SingleSiteRecording } from './single-site.js';
export { createSafeUpdateRecording } from './safe-update-recording.js';
