/**
 * The kind of every statement in an SQL script, read independently of the daemon's own
 * parser: strings, quoted names and `--` comments are skipped; `/*` and `#` comments (which
 * MariaDB may execute or which hide text) are reported as statements of their own.
 */
export function dumpStatementKinds(sql: string): string[] {
  const kinds: string[] = [];
  let statement = '';
  for (let at = 0; at < sql.length; at++) {
    const character = sql[at]!;
    if (character === "'" || character === '`' || character === '"') {
      for (at++; at < sql.length; at++) {
        if (character === "'" && sql[at] === '\\') at++;
        else if (sql[at] === character) {
          if (sql[at + 1] !== character) break;
          at++;
        }
      }
      statement += ' x ';
    } else if (sql.startsWith('-- ', at) || sql.startsWith('--\n', at)) {
      const end = sql.indexOf('\n', at);
      at = end < 0 ? sql.length : end;
    } else if (character === '#' || sql.startsWith('/*', at)) {
      kinds.push(`COMMENT ${character}`);
    } else if (character === ';') {
      kinds.push(kindOf(statement));
      statement = '';
    } else statement += character;
  }
  if (statement.trim()) kinds.push(kindOf(statement));
  return kinds;
}

function kindOf(statement: string): string {
  const words = statement.trim().toUpperCase().split(/\s+/);
  for (const kind of ['DROP TABLE IF EXISTS', 'CREATE TABLE', 'INSERT', 'LOCK TABLES', 'UNLOCK TABLES', 'SET']) {
    if (words.slice(0, kind.split(' ').length).join(' ') === kind) return kind;
  }
  return words.slice(0, 3).join(' ');
}
