import { join } from 'node:path';
import { openDatabase } from '../db/database.js';
import { createBackupsRepository } from './backups.repository.js';
import { backupStoreDir } from './backups.service.js';
import { createFileObjectStore } from './object-store.js';
import { verifyBackup } from './verify.js';

/** `sitewarden backup verify <backupId>`: re-reads the backup from the store; exit code 0 only when every hash matches. */
export async function verifyBackupCommand({
  dataDir,
  databaseFile,
  backupId,
  migrate = true,
  out,
}: {
  dataDir: string;
  databaseFile: string;
  backupId: string;
  migrate?: boolean;
  out: (line: string) => void;
}): Promise<number> {
  const database = openDatabase(join(dataDir, databaseFile), { migrate });
  try {
    const backup = createBackupsRepository({ db: database.db }).findBackup(backupId);
    if (!backup) {
      out(`no backup has the id ${backupId}`);
      return 2;
    }
    const result = await verifyBackup({ store: createFileObjectStore({ dir: backupStoreDir(dataDir) }), backup });
    out(
      `${result.ok ? 'ok' : 'FAILED'}: backup ${backupId}, ${result.objectsChecked} objects, ${result.bytesChecked} bytes checked`,
    );
    for (const problem of result.problems) out(`  ${problem}`);
    return result.ok ? 0 : 1;
  } finally {
    database.close();
  }
}
