import { CompiledQuery, sql, type Transaction } from 'kysely';
import type { Database } from './schema.js';
import { STATEMENT_ROWS } from './statement-batches.js';

/**
 * Statements of the bulk write paths, built once and bound many times. Building a statement with
 * Kysely costs more than running it (a batch of records is thousands of values): each statement is
 * built once per dialect and shape, with a marker as each value, so that the compiled parameters
 * say which value goes where; later writes only bind theirs.
 */

type Trx = Transaction<Database>;

/** A statement's SQL, and which of the values given goes into each of its parameters. */
export interface Template {
  sql: string;
  slots: number[];
  /** Each value goes into the parameter of its own place (slots 0, 1, 2, ...): bound as given. */
  inOrder: boolean;
}
const templates = new Map<string, Template>();

/** The value a template is built with for the `slot`th value given: distinct, so it names its place. */
export const marker = (slot: number) => `\u0000${slot}`;

/** `numbered` ($1, $2: PostgreSQL) or `positional` (?: SQLite), by the adapter a transaction runs on. */
const styles = new WeakMap<object, string>();
function placeholderStyle(trx: Trx): string {
  const adapter = trx.getExecutor().adapter;
  let style = styles.get(adapter);
  if (style === undefined) {
    style = trx
      .selectNoFrom(sql<number>`${0}`.as('p'))
      .compile()
      .sql.includes('$1')
      ? 'numbered'
      : 'positional';
    styles.set(adapter, style);
  }
  return style;
}

/** The statement of `shape` for this transaction's dialect, built by `build` the first time. */
export function templateOf(trx: Trx, shape: string, build: () => CompiledQuery): Template {
  const key = `${placeholderStyle(trx)}:${shape}`;
  const known = templates.get(key);
  if (known) return known;
  const compiled = build();
  const slots = compiled.parameters.map((parameter) => {
    const text = String(parameter);
    if (!text.startsWith('\u0000')) throw new Error(`row-inserts: unexpected parameter ${text}`);
    return Number(text.slice(1));
  });
  const template = { sql: compiled.sql, slots, inOrder: slots.every((slot, index) => slot === index) };
  templates.set(key, template);
  return template;
}

/**
 * Runs a template with `values`, each in the place its marker had. Values in order are bound as
 * given: the array becomes the statement's parameters, so the caller hands it over.
 */
export function runTemplate(trx: Trx, template: Template, values: unknown[]) {
  return trx.executeQuery(
    CompiledQuery.raw(template.sql, template.inOrder ? values : template.slots.map((slot) => values[slot])),
  );
}

/**
 * Rows per multi-row INSERT: powers of two up to a whole batch, so that a few statements per table
 * are ever built (`insertRows`).
 */
const INSERT_SIZES = [128, 64, 32, 16, 8, 4, 2, 1].filter((size) => size <= STATEMENT_ROWS);

/** Inserts rows, each its values in the order of `columns`, a few multi-row statements at a time. */
export async function insertRows(
  trx: Trx,
  table: 'records' | 'record_versions' | 'idempotency_keys',
  columns: readonly string[],
  rows: readonly unknown[][],
): Promise<void> {
  let start = 0;
  for (const size of INSERT_SIZES) {
    for (; rows.length - start >= size; start += size) {
      const template = templateOf(trx, `insert:${table}:${columns.join(',')}:${size}`, () =>
        trx
          .insertInto(table)
          .values(
            Array.from({ length: size }, (_, row) =>
              Object.fromEntries(columns.map((column, k) => [column, marker(row * columns.length + k)])),
            ) as never,
          )
          .compile(),
      );
      await runTemplate(trx, template, valuesOf(rows, start, size, columns.length));
    }
  }
}

/** The values of `size` rows from `start`, one after another: a statement's parameters. */
function valuesOf(rows: readonly unknown[][], start: number, size: number, width: number): unknown[] {
  const values = new Array<unknown>(size * width);
  let at = 0;
  for (let row = start; row < start + size; row++) {
    const cells = rows[row]!;
    for (let column = 0; column < width; column++) values[at++] = cells[column];
  }
  return values;
}
