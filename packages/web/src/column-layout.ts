/**
 * The records table's columns as this browser's user arranged them for one topic: which are hidden
 * or shown, and the widths dragged to. Kept in localStorage by topic history id, so it lasts across
 * revisions, reloads and Back; a column nobody chose for starts hidden when no record fills it.
 */
export interface ColumnLayout {
  /** Columns hidden by choice. */
  hidden: string[];
  /** Columns shown by choice although no record fills them. */
  shown: string[];
  /** Widths in CSS pixels, by column name. */
  widths: Record<string, number>;
}

export const MIN_COLUMN_WIDTH = 60;
export const MAX_COLUMN_WIDTH = 1200;

const EMPTY: ColumnLayout = { hidden: [], shown: [], widths: {} };
const storageKey = (historyId: string) => `rxs.records-columns.${historyId}`;

const names = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((name): name is string => typeof name === 'string') : [];

/** The layout saved for a topic; the default (nothing chosen) when there is none or it is unreadable. */
export function loadLayout(historyId: string): ColumnLayout {
  try {
    const parsed: unknown = JSON.parse(localStorage.getItem(storageKey(historyId)) ?? 'null');
    if (!parsed || typeof parsed !== 'object') return EMPTY;
    const { hidden, shown, widths } = parsed as Record<string, unknown>;
    const sizes: Record<string, number> = Object.create(null);
    if (widths && typeof widths === 'object')
      for (const [name, width] of Object.entries(widths))
        if (typeof width === 'number' && Number.isFinite(width)) sizes[name] = clampWidth(width);
    return { hidden: names(hidden), shown: names(shown), widths: sizes };
  } catch {
    return EMPTY;
  }
}

/** Saves a topic's layout; a browser that refuses storage (private mode, quota) keeps it for the page. */
export function saveLayout(historyId: string, layout: ColumnLayout): void {
  try {
    localStorage.setItem(storageKey(historyId), JSON.stringify(layout));
  } catch {
    // The layout then lasts as long as the page: nothing the user typed is lost.
  }
}

export const clampWidth = (width: number) =>
  Math.round(Math.min(MAX_COLUMN_WIDTH, Math.max(MIN_COLUMN_WIDTH, width)));

/** Whether a column is hidden: by choice, or because no record fills it and it was not chosen. */
export function isHidden(layout: ColumnLayout, name: string, empty: boolean): boolean {
  if (layout.hidden.includes(name)) return true;
  return empty && !layout.shown.includes(name);
}

/** The layout with a column shown or hidden by choice. */
export function withVisibility(layout: ColumnLayout, name: string, visible: boolean): ColumnLayout {
  const hidden = layout.hidden.filter((n) => n !== name);
  const shown = layout.shown.filter((n) => n !== name);
  return visible
    ? { ...layout, hidden, shown: [...shown, name] }
    : { ...layout, hidden: [...hidden, name], shown };
}

/** The layout with a column's width set (null: back to the automatic width). */
export function withWidth(layout: ColumnLayout, name: string, width: number | null): ColumnLayout {
  const widths = { ...layout.widths };
  if (width === null) delete widths[name];
  else widths[name] = clampWidth(width);
  return { ...layout, widths };
}
