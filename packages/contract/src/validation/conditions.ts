import type { FormComponent, FormSchema } from '../form.js';
import { isPlainObject, type Loc } from './data-path.js';
import { measure, type Size } from './data-size.js';

type UnaryTest = typeof import('feelin').unaryTest;

/**
 * feelin's unary test, once loaded: by the validation entry (`@rxs/contract/validation`, with it)
 * or by loadConditionsFor (`@rxs/contract/validation/checks`, only for a form that has a
 * condition). feelin and its date library are most of the validation's code, and most forms of an
 * import have no condition.
 */
let unaryTest: UnaryTest | undefined;

/** Makes `evaluate` (feelin's unaryTest) the evaluator of every condition. */
export function useConditionEvaluator(evaluate: UnaryTest): void {
  unaryTest = evaluate;
}

/**
 * Loads FEEL when `schema` has a `conditional.hide` expression and it is not loaded yet; a
 * validation against such a form throws until it is. A validation of a form without one never
 * evaluates FEEL.
 */
export async function loadConditionsFor(schema: FormSchema): Promise<void> {
  if (unaryTest === undefined && hasHideExpression(schema)) unaryTest = (await import('feelin')).unaryTest;
}

/** Whether a component of `schema`, at any depth, has a `conditional.hide` expression. */
function hasHideExpression(schema: FormSchema): boolean {
  const pending: unknown[] = [schema];
  while (pending.length > 0) {
    const item = pending.pop();
    if (!isPlainObject(item)) continue;
    if (hideExpressionOf(item as FormComponent) !== undefined) return true;
    if (Array.isArray(item['components']))
      for (const child of item['components'] as unknown[]) pending.push(child);
  }
  return false;
}

/** Where a component is evaluated: form-js's expression scope (`this`, `parent`, `i`). */
export interface ConditionScope {
  /** The current scope's data: the record at the top level, the entry inside a dynamic list. */
  thisData: unknown;
  /** The enclosing scope's data (null at the top level). */
  parentData: unknown;
  /** 1-based positions in the enclosing dynamic lists, outermost first. */
  indexes: number[];
}

/** A `conditional.hide` that could not be evaluated: the component was treated as visible. */
export interface ConditionWarning {
  /** The location of the scope the component sits in. */
  loc: Loc;
  /** The component's key, or its id when it has none. */
  component: string | undefined;
  expression: string;
  message: string;
}

/**
 * Default work allowed for FEEL over one validation, in values handed to feelin (which copies
 * them) plus a fixed cost per evaluation: at most 5,000 evaluations, one to two seconds of CPU.
 */
export const DEFAULT_CONDITION_BUDGET = 2_500_000;
/** What one evaluation costs besides its values: feelin parses the expression every time (~0.2 ms). */
export const EVALUATION_COST = 500;
/** feelin copies its context recursively: deeper values are not handed to it. */
const MAX_CONTEXT_DEPTH = 200;

/** What an expression can read, found once per expression text. */
interface Reads {
  rootKeys: string[];
  this: boolean;
  parent: boolean;
  i: boolean;
}

/**
 * Evaluates form-js `conditional.hide` expressions the way form-js does: the text after "=" is a
 * FEEL unary test (feelin's `unaryTest`) over the record's top-level data plus `this`, `parent`
 * and `i` (also as `_this_`, `_parent_`, `_i_`); the component is hidden only when the result is
 * exactly `true`. Any failure (syntax, evaluation, data too deep) leaves the component visible and
 * is passed to `onWarning`.
 *
 * feelin copies its whole context on every call, so only the values an expression can name are
 * handed to it (a top-level key whose text does not occur in the expression cannot be read),
 * results are reused when those values are the same, and the total size of what is handed over
 * is bounded by `budget`. Past the budget, `exhausted` turns true and every remaining
 * conditional component counts as hidden (the caller refuses the record as too complex).
 */
export class HideConditions {
  // Made when first needed: most records of a form need few of them, and a validation is often
  // one of many thousands.
  private results: Map<string, boolean> | undefined;
  private sizes: WeakMap<object, Size> | undefined;
  private ids: WeakMap<object, number> | undefined;
  private nextId = 0;
  private rootKeys: string[] | undefined;
  private spent = 0;
  exhausted = false;

  constructor(
    private readonly root: Record<string, unknown>,
    private readonly budget: number = DEFAULT_CONDITION_BUDGET,
    private readonly onWarning?: (warning: ConditionWarning) => void,
    /** What each expression reads, shared by the validations of one form. */
    private readonly reads: ExpressionReads = new ExpressionReads(),
  ) {}

  /** Whether `component`, whose hide expression is `expression` (hideExpressionOf), is hidden. */
  isHidden(component: FormComponent, expression: string, scope: ConditionScope, loc: Loc): boolean {
    if (this.exhausted) return true;
    const reads = this.readsOf(expression);
    // An expression of the record's top-level data alone has one outcome per record.
    const cacheKey =
      reads.this || reads.parent || reads.i
        ? [
            expression,
            reads.this ? this.idOf(scope.thisData) : '-',
            reads.parent ? this.idOf(scope.parentData) : '-',
            reads.i ? scope.indexes.join(',') : '-',
          ].join('\u0000')
        : expression;
    const known = this.results?.get(cacheKey);
    if (known !== undefined) return known;

    const hidden = this.evaluate(component, expression, reads, scope, loc);
    if (!this.exhausted) (this.results ??= new Map()).set(cacheKey, hidden);
    return hidden;
  }

  private evaluate(
    component: FormComponent,
    expression: string,
    reads: Reads,
    scope: ConditionScope,
    loc: Loc,
  ): boolean {
    const special: [string, unknown][] = [];
    if (reads.this) special.push(['this', scope.thisData]);
    if (reads.parent) special.push(['parent', scope.parentData]);
    if (reads.i) special.push(['i', scope.indexes]);
    const values: unknown[] = [];
    for (const [, value] of special) values.push(value);
    for (const key of reads.rootKeys) values.push(this.root[key]);

    let cost = EVALUATION_COST;
    for (const value of values) {
      // A scalar is one node, one level deep: no measuring, no memo.
      if (typeof value !== 'object' || value === null) {
        cost += 1;
        continue;
      }
      const size = measure(value, this.budget, (this.sizes ??= new WeakMap()));
      if (size.depth > MAX_CONTEXT_DEPTH) {
        return this.fail(
          component,
          loc,
          expression,
          `the data it reads is nested deeper than ${MAX_CONTEXT_DEPTH} levels`,
        );
      }
      cost += size.nodes;
    }
    if (this.spent + cost > this.budget) {
      this.exhausted = true;
      return true;
    }
    this.spent += cost;

    // form-js builds {...special, ...data, ..._special_}: top-level keys shadow this/parent/i.
    const contextOf = () => {
      const context: Record<string, unknown> = {};
      for (const [name, value] of special) define(context, name, value);
      for (const key of reads.rootKeys) define(context, key, this.root[key]);
      for (const [name, value] of special) define(context, `_${name}_`, value);
      return context;
    };
    const outcome = evaluateOnce(expression, values, contextOf);
    return typeof outcome === 'boolean' ? outcome : this.fail(component, loc, expression, outcome);
  }

  private fail(component: FormComponent, loc: Loc, expression: string, message: string): false {
    this.onWarning?.({
      loc,
      component: component.key ?? component.id,
      expression: `=${expression}`,
      message: `condition not evaluated, component treated as visible: ${message}`,
    });
    return false;
  }

  private readsOf(expression: string): Reads {
    return this.reads.of(expression, (this.rootKeys ??= Object.keys(this.root)));
  }

  /** A stable identity for a scope value, so results can be reused for the same data. */
  private idOf(value: unknown): string {
    if (typeof value !== 'object' || value === null) return `v${typeof value}:${String(value)}`;
    this.ids ??= new WeakMap();
    let id = this.ids.get(value);
    if (id === undefined) {
      id = this.nextId++;
      this.ids.set(value, id);
    }
    return `o${id}`;
  }
}

/**
 * The FEEL expression of a component's `conditional.hide` (the text after "="), or undefined when
 * it has none: a component without one is never hidden.
 */
export function hideExpressionOf(component: FormComponent): string | undefined {
  const conditional: unknown = component.conditional;
  if (!isPlainObject(conditional)) return undefined;
  const hide = conditional['hide'];
  return typeof hide === 'string' && hide.startsWith('=') ? hide.slice(1) : undefined;
}

/**
 * What each expression can read of a record with the given top-level keys: a top-level key whose
 * text occurs in the expression. Kept per expression for the last keys seen, since the records of
 * one form mostly have the same keys in the same order; one instance serves the validations of one
 * form (its expressions are few).
 */
export class ExpressionReads {
  private readonly known = new Map<string, { keys: readonly string[]; reads: Reads }>();

  of(expression: string, keys: readonly string[]): Reads {
    const known = this.known.get(expression);
    if (known && sameKeys(known.keys, keys)) return known.reads;
    const reads = { rootKeys: keys.filter((key) => expression.includes(key)), ...scopeReadsOf(expression) };
    this.known.set(expression, { keys, reads });
    return reads;
  }
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Which of `this`, `parent` and `i` an expression text can read. */
type ScopeReads = Omit<Reads, 'rootKeys'>;

/**
 * What each expression text reads of the scope, shared by every validation of the process (a
 * form's few expressions are met again in each record it checks). Bounded: past the bound it
 * starts afresh.
 */
const scopeReads = new Map<string, ScopeReads>();
const MAX_EXPRESSIONS = 1_000;

function scopeReadsOf(expression: string): ScopeReads {
  let reads = scopeReads.get(expression);
  if (!reads) {
    reads = {
      this: expression.includes('this'),
      parent: expression.includes('parent'),
      i: /(?<![A-Za-z0-9$])_?i_?(?![A-Za-z0-9$])/.test(expression),
    };
    if (scopeReads.size >= MAX_EXPRESSIONS) scopeReads.clear();
    scopeReads.set(expression, reads);
  }
  return reads;
}

/**
 * Outcomes of FEEL evaluations by expression, then by context, shared by every validation of the
 * process: feelin parses the expression on each call (about 0.2 ms), and records of one form mostly
 * hand the same few values to its conditions (a select's options), so an import of a million rows
 * or a busy service evaluates each pair once. Bounded (past the bound it starts afresh); contexts
 * too large to key are not kept.
 */
const outcomes = new Map<string, Map<string, boolean | string>>();
let keptOutcomes = 0;
const MAX_OUTCOMES = 10_000;
const MAX_KEYED_CONTEXT = 2_048;

/**
 * `true`/`false`, or why the expression could not be evaluated. `values` are what the context
 * holds, in the order the expression's reads give them (the same names each time for the same
 * expression): they key the outcome, and the context is built only when it is not known yet.
 */
function evaluateOnce(
  expression: string,
  values: readonly unknown[],
  contextOf: () => Record<string, unknown>,
): boolean | string {
  let key: string | undefined;
  try {
    // `undefined` (no such key) is kept apart from `null`: no JSON text is "~".
    let json = values.length === 0 ? '' : (JSON.stringify(values[0]) ?? '~');
    for (let index = 1; index < values.length; index++) json += `,${JSON.stringify(values[index]) ?? '~'}`;
    if (json.length <= MAX_KEYED_CONTEXT) key = json;
  } catch {
    // A context JSON cannot hold is evaluated each time.
  }
  const known = key === undefined ? undefined : outcomes.get(expression)?.get(key);
  if (known !== undefined) return known;
  if (unaryTest === undefined)
    throw new Error(
      'FEEL is not loaded: await loadConditionsFor(schema) before validating against this form.',
    );
  const evaluate = unaryTest;
  let outcome: boolean | string;
  try {
    outcome = evaluate(expression, contextOf()).value === true;
  } catch (error) {
    outcome = error instanceof Error ? error.message : String(error);
  }
  if (key !== undefined) {
    if (keptOutcomes >= MAX_OUTCOMES) {
      outcomes.clear();
      keptOutcomes = 0;
    }
    let ofExpression = outcomes.get(expression);
    if (!ofExpression) outcomes.set(expression, (ofExpression = new Map()));
    ofExpression.set(key, outcome);
    keptOutcomes++;
  }
  return outcome;
}

/** Sets an own property, even one named `__proto__`, without touching any prototype. */
function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
