import type { FormSchema } from '../form.js';
import type { ValidationErrorItem } from '../errors.js';
import {
  DEFAULT_CONDITION_BUDGET,
  ExpressionReads,
  HideConditions,
  type ConditionWarning,
} from './conditions.js';
import { isPlainObject, type Loc } from './data-path.js';
import { kindOf } from './describe.js';
import { DEFAULT_MAX_PROBLEMS, Problems } from './problems.js';
import { compileComponents, walkComponents } from './walk.js';

export interface ValidateRecordDataOptions {
  /** Where `data` sits in the request; every item's `loc` starts with it. Default ["body", "data"]. */
  locPrefix?: Loc;
  /** At most this many items, then one `too_many_errors` item. Default 100. */
  maxProblems?: number;
  /**
   * Bound on the FEEL work of the whole validation: 500 per evaluation plus the values handed to
   * it. Default 2,500,000 (at most 5,000 evaluations). Past it, the answer ends with one
   * `too_complex` item.
   */
  conditionBudget?: number;
  /**
   * Told about `conditional.hide` expressions that could not be evaluated (the component counted as
   * visible). A condition is evaluated only where it can change the outcome: not that of a field
   * that is not required and holds nothing.
   */
  onWarning?: (warning: ConditionWarning) => void;
}

/**
 * Checks record `data` against a form-js schema the way form-js checks a form on submit: required
 * components (unless hidden by their `conditional.hide`), the type each component stores, the
 * allowed options of select, radio, checklist and taglist, and the `validate` rules. Keys the
 * schema does not know are allowed. Returns one item per problem in schema order; empty when the
 * data is valid. Pure: reads its arguments, never changes them, never throws on any input.
 */
export function validateRecordData(
  schema: FormSchema,
  data: unknown,
  options: ValidateRecordDataOptions = {},
): ValidationErrorItem[] {
  return recordDataValidator(schema)(data, options);
}

/**
 * validateRecordData for many records of one form: the schema is read once, here, and the
 * function returned checks each record's data against it. The schema must not change meanwhile.
 */
export function recordDataValidator(
  schema: FormSchema,
): (data: unknown, options?: ValidateRecordDataOptions) => ValidationErrorItem[] {
  const components = compileComponents(isPlainObject(schema) ? schema.components : undefined);
  const reads = new ExpressionReads();
  return (data, options = {}) => {
    const prefix = options.locPrefix ?? ['body', 'data'];
    const problems = new Problems(prefix, options.maxProblems ?? DEFAULT_MAX_PROBLEMS);
    if (!isPlainObject(data)) {
      problems.add(
        [...prefix],
        data === undefined
          ? 'Record data is required: an object of form keys to values ({} for an empty record)'
          : `Record data must be an object of form keys to values, not ${kindOf(data)}`,
        data === undefined ? 'missing' : 'dict_type',
      );
      return problems.list();
    }
    const budget = options.conditionBudget ?? DEFAULT_CONDITION_BUDGET;
    const conditions = new HideConditions(data, budget, options.onWarning, reads);
    walkComponents(
      components,
      { data, loc: [...prefix], thisData: data, parentData: null, indexes: [] },
      { problems, conditions },
    );
    if (conditions.exhausted) {
      problems.add(
        [...prefix],
        `The form's conditions could not all be evaluated within the validation limit (${budget} units of work): the record has too many entries or too much data for them. Split the data into smaller records.`,
        'too_complex',
      );
    }
    return problems.list();
  };
}
