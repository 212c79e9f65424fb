/**
 * JSON columns: SQLite and PostgreSQL's `json` hand back the text we stored, PostgreSQL's driver
 * hands back `jsonb` parsed.
 * These two helpers make both look alike, and let listings splice stored JSON text into responses
 * without a parse and re-serialise.
 */
export function jsonText(column: unknown): string {
  return typeof column === 'string' ? column : JSON.stringify(column);
}

export function jsonValue<T>(column: unknown): T {
  return (typeof column === 'string' ? JSON.parse(column) : column) as T;
}
