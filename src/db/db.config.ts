import { z } from 'zod';
import { defineSettings } from '../shared/settings.js';

/**
 * Where the daemon's state lives (issue 34, docs/design/cluster-state.md): src/db/state-db.ts opens
 * PostgreSQL when this names one, SQLite in the data directory otherwise. Composed by src/config.ts,
 * which refuses it while cluster mode is not built (nothing reads or writes PostgreSQL yet).
 */
export const DATABASE_SETTINGS = defineSettings({
  SITEWARDEN_DATABASE_URL: {
    schema: z
      .url({
        protocol: /^postgres(ql)?$/,
        error: 'SITEWARDEN_DATABASE_URL must be a postgres:// or postgresql:// URL',
      })
      .optional(),
    defaultText: 'unset: SQLite in the data directory',
    example: 'postgres://sitewarden@db.example.org/sitewarden',
    doc: 'PostgreSQL connection URL for cluster mode (issue 34); empty: the SQLite database in the data directory. Cluster mode is not built yet: a start with it set is refused',
    comment:
      'PostgreSQL connection URL for cluster mode; unset, the state is the SQLite database in the data\ndirectory. Cluster mode is not built yet: a start with this set is refused.',
  },
});
