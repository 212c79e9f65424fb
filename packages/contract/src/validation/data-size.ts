/** How big and how deep a JSON value is, counted without recursion so deep input cannot overflow. */
export interface Size {
  /** Values counted (every object, array and scalar is one); stops a little past the limit. */
  nodes: number;
  /** Nesting levels (a scalar is 1). */
  depth: number;
}

/**
 * Measures `value`, stopping once `limit` nodes are counted. Objects and arrays measured before
 * (by identity) are answered from `memo`.
 */
export function measure(value: unknown, limit: number, memo: WeakMap<object, Size>): Size {
  if (typeof value !== 'object' || value === null) return { nodes: 1, depth: 1 };
  const known = memo.get(value);
  if (known) return known;
  const size: Size = { nodes: 0, depth: 0 };
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0 && size.nodes <= limit) {
    const [current, depth] = stack.pop() as [unknown, number];
    size.nodes += 1;
    if (depth > size.depth) size.depth = depth;
    if (typeof current !== 'object' || current === null) continue;
    for (const child of Array.isArray(current) ? current : Object.values(current))
      stack.push([child, depth + 1]);
  }
  memo.set(value, size);
  return size;
}

/** Data keys a record may have by default, counted over nested objects and list entries. */
export const DEFAULT_MAX_RECORD_KEYS = 2000;

/**
 * The object keys in `value` and everything nested in it (list entries included), counted
 * without recursion; stops once the count passes `limit`, so a hostile record costs little.
 */
export function countKeys(value: unknown, limit: number): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && count <= limit) {
    const current = stack.pop();
    if (typeof current !== 'object' || current === null) continue;
    if (Array.isArray(current)) {
      for (const item of current) stack.push(item);
      continue;
    }
    for (const key in current) {
      if (!Object.hasOwn(current, key)) continue;
      count += 1;
      stack.push((current as Record<string, unknown>)[key]);
    }
  }
  return count;
}
