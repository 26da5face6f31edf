import { z } from 'zod';
import { defineSettings } from '../shared/settings.js';

/**
 * Where the daemon's state lives (issue 34, docs/design/cluster-state.md): src/db/state-db.ts opens
 * PostgreSQL when this names one, SQLite in the data directory otherwise. Composed by src/config.ts.
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
    doc: 'PostgreSQL connection URL for cluster mode ([cluster.md](cluster.md)); empty: the SQLite database in the data directory. Set, `SITEWARDEN_SECRET_KEY` must be set too, the same in every process',
    comment:
      'PostgreSQL connection URL for cluster mode (docs/cluster.md); unset, the state is the SQLite\ndatabase in the data directory. Set, SITEWARDEN_SECRET_KEY must be set too, the same in every process.',
  },
});
