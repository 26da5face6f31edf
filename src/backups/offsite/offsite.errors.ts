import { defineProblem } from '../../shared/errors.js';

export const offsiteProblems = {
  wrongPassphrase: defineProblem(
    'backup-target-wrong-passphrase',
    422,
    "The passphrase does not open the backup target's repository key",
  ),
  keyFileInvalid: defineProblem('backup-target-key-invalid', 422, "The backup target's key file is not readable"),
  targetUnknown: defineProblem('backup-target-unknown', 404, 'No backup target has this name'),
  targetFailed: defineProblem('backup-target-failed', 502, 'A backup target could not be written or read'),
  snapshotNotFound: defineProblem('backup-snapshot-not-found', 404, 'The backup target holds no such backup'),
  targetEmpty: defineProblem('backup-target-empty', 409, 'The backup target holds no Sitewarden repository yet'),
  snapshotTaken: defineProblem(
    'backup-snapshot-taken',
    409,
    "The target's backup is already this daemon's backup of another site",
  ),
  notHeld: defineProblem('backup-not-held', 409, 'No reachable target holds this backup'),
};
