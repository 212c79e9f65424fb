/** Whether a database error is a unique violation (SQLite's constraint message, PostgreSQL's 23505). */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; message?: string } | undefined;
  return e?.code === '23505' || /UNIQUE constraint failed/.test(e?.message ?? '');
}
