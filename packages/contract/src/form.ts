import { Dictionary } from './common.js';
import { Type, type Static } from '@sinclair/typebox';

/**
 * A component of a bpmn.io form-js schema. Only the fields the contract relies on are named;
 * everything else form-js writes (layout, validate, conditional, ...) is kept as is.
 */
export const FormComponent = Type.Object(
  {
    type: Type.Optional(Type.String()),
    id: Type.Optional(Type.String()),
    key: Type.Optional(Type.String()),
    /** Data path of a container (group, dynamiclist): its children's values live under it. */
    path: Type.Optional(Type.String()),
    label: Type.Optional(Type.String()),
    properties: Type.Optional(Dictionary(Type.Unknown())),
    values: Type.Optional(
      Type.Array(Type.Object({ label: Type.Optional(Type.String()), value: Type.Unknown() })),
    ),
    components: Type.Optional(Type.Array(Type.Unknown())),
  },
  { additionalProperties: true },
);
export interface FormComponent {
  type?: string;
  id?: string;
  key?: string;
  path?: string;
  label?: string;
  properties?: Record<string, unknown>;
  values?: { label?: string; value: unknown }[];
  valuesKey?: string;
  components?: FormComponent[];
  conditional?: { hide?: string };
  validate?: {
    required?: boolean;
    min?: number;
    max?: number;
    minLength?: number;
    maxLength?: number;
    pattern?: string;
    validationType?: 'email' | 'phone' | string;
  };
  [other: string]: unknown;
}

/** A form-js schema as stored in `knowledge_topic_schema` (typed as the `FormSchema` interface). */
export const FormSchema = Type.Unsafe<FormSchema>(
  Type.Object({ components: Type.Array(FormComponent) }, { additionalProperties: true }),
);
export interface FormSchema {
  components: FormComponent[];
  [other: string]: unknown;
}

/** Component types that hold other components (form-js 1.x). */
export const CONTAINER_TYPES: ReadonlySet<string> = new Set([
  'group',
  'dynamiclist',
  'iframe-group',
  'table-group',
]);

/** Where a keyed component sits: the chain of containers from the root down to it. */
export interface ComponentLocation {
  component: FormComponent;
  /** Containers enclosing the component, outermost first. */
  parents: FormComponent[];
}

/**
 * Visits every component of a schema, depth first in document order, including those nested in
 * containers. Tolerates malformed input (non-objects, missing arrays) by skipping it.
 */
export function* walkComponents(
  components: unknown,
  parents: FormComponent[] = [],
): Generator<ComponentLocation> {
  if (!Array.isArray(components)) return;
  for (const item of components) {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) continue;
    const component = item as FormComponent;
    yield { component, parents };
    if (Array.isArray(component.components)) {
      yield* walkComponents(component.components, [...parents, component]);
    }
  }
}
