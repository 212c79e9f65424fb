import { useEffect, useRef, useState } from 'preact/hooks';
import { clampWidth, MAX_COLUMN_WIDTH, MIN_COLUMN_WIDTH } from '../column-layout';

/** A column the Columns menu lists: its name, whether it shows, and whether any record fills it. */
export interface ColumnChoice {
  name: string;
  visible: boolean;
  empty: boolean;
}

/**
 * "Columns": a disclosure listing every field column with a checkbox; unticking hides it. Columns
 * no record fills are marked, since they start hidden. Escape closes it and gives the focus back.
 */
export function ColumnsMenu({
  columns,
  onToggle,
  onReset,
}: {
  columns: ColumnChoice[];
  onToggle: (name: string, visible: boolean) => void;
  onReset: () => void;
}) {
  const [open, setOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  const hidden = columns.filter((column) => !column.visible).length;
  return (
    <div class="columns-menu">
      <button
        ref={button}
        type="button"
        class="button"
        aria-expanded={open}
        aria-controls="records-columns"
        onClick={() => setOpen(!open)}
      >
        Columns{hidden > 0 ? ` (${hidden} hidden)` : ''}
      </button>
      {open && (
        <fieldset
          id="records-columns"
          class="columns-menu-panel"
          onKeyDown={(event) => {
            if (event.key !== 'Escape') return;
            setOpen(false);
            button.current?.focus();
          }}
        >
          <legend>Columns shown</legend>
          {columns.map((column) => (
            <label key={column.name} class="columns-menu-item">
              <input
                type="checkbox"
                checked={column.visible}
                onChange={(event) => onToggle(column.name, event.currentTarget.checked)}
              />
              <span>{column.name}</span>
              {column.empty && <span class="muted"> (no record fills it)</span>}
            </label>
          ))}
          <button type="button" class="button button-small button-ghost" onClick={onReset}>
            Reset columns
          </button>
        </fieldset>
      )}
    </div>
  );
}

const KEY_STEP = 20;

/**
 * The handle at a column header's right edge: drag it, or focus it and use the arrow keys, to set
 * the column's width; double-click or Delete gives the column its automatic width again.
 */
export function ResizeHandle({
  label,
  width,
  onWidth,
}: {
  label: string;
  /** The width set, or undefined while the column has its automatic width. */
  width: number | undefined;
  onWidth: (width: number | null) => void;
}) {
  const handle = useRef<HTMLSpanElement>(null);
  const [drag, setDrag] = useState<{ startX: number; startWidth: number }>();
  useEffect(() => {
    if (!drag) return;
    const move = (event: PointerEvent) => onWidth(clampWidth(drag.startWidth + event.clientX - drag.startX));
    const end = () => setDrag(undefined);
    window.addEventListener('pointermove', move);
    window.addEventListener('pointerup', end);
    return () => {
      window.removeEventListener('pointermove', move);
      window.removeEventListener('pointerup', end);
    };
  }, [drag, onWidth]);
  const current = () => width ?? handle.current?.parentElement?.getBoundingClientRect().width ?? 150;
  return (
    <span
      ref={handle}
      class="column-resize"
      role="separator"
      aria-orientation="vertical"
      aria-label={`Resize column ${label}`}
      aria-valuenow={Math.round(current())}
      aria-valuemin={MIN_COLUMN_WIDTH}
      aria-valuemax={MAX_COLUMN_WIDTH}
      tabIndex={0}
      onPointerDown={(event) => {
        event.preventDefault();
        setDrag({ startX: event.clientX, startWidth: current() });
      }}
      onDblClick={() => onWidth(null)}
      onKeyDown={(event) => {
        if (event.key === 'ArrowRight' || event.key === 'ArrowLeft') {
          event.preventDefault();
          onWidth(clampWidth(current() + (event.key === 'ArrowRight' ? KEY_STEP : -KEY_STEP)));
        } else if (event.key === 'Delete' || event.key === 'Backspace') {
          event.preventDefault();
          onWidth(null);
        }
      }}
    />
  );
}
