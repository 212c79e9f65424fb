import type { FormComponent } from '@rxs/contract';

/**
 * Form components by the data path the field map gives their fields (groups with a path nest). In
 * ReqIF a field's component decides its datatype on export and how its value reads back on import.
 */
export function componentsByKey(
  components: unknown,
  prefix = '',
  found = new Map<string, FormComponent>(),
): Map<string, FormComponent> {
  if (!Array.isArray(components)) return found;
  for (const item of components as unknown[]) {
    if (item === null || typeof item !== 'object') continue;
    const component = item as FormComponent;
    // A dynamiclist's items are objects in one value, written as text.
    if (component.type === 'dynamiclist') continue;
    if (Array.isArray(component.components)) {
      const path = typeof component.path === 'string' ? component.path : '';
      componentsByKey(component.components, [prefix, path].filter(Boolean).join('.'), found);
    } else if (typeof component.key === 'string' && component.key) {
      found.set([prefix, component.key].filter(Boolean).join('.'), component);
    }
  }
  return found;
}
