/**
 * The one id a list shows for a record. Its name when the name starts with its readable id (`P-1
 * Pump flow`, `REQ-301`), else its readable id (`REQ_001` from its title, for a record named
 * `Requirements-1`), else its name: a row never shows two ids for one record. Readable ids are the
 * ones exports derive, so the table and the exported files agree.
 */
export function recordLabel({ name, readableId }: { name: string; readableId: string | null }): string {
  if (!readableId) return name;
  const carried = name.startsWith(readableId) && !/^[A-Za-z0-9_.-]/.test(name.slice(readableId.length));
  return carried ? name : readableId;
}

/** A title without the readable id it starts with ("REQ_001 — Pump" after REQ_001: "Pump"). */
export function titleAfterId({
  title,
  readableId,
}: {
  title: string | null;
  readableId: string | null;
}): string {
  if (!title) return '';
  if (!readableId || !title.startsWith(readableId)) return title;
  return title.slice(readableId.length).replace(/^[\s:–—-]+/, '');
}
