/** form-js reads a key such as "address.street" as a path into nested objects. */
export function splitPath(path: string): string[] {
  return path.split('.');
}

export function joinPath(prefix: string, key: string): string {
  return prefix === '' ? key : `${prefix}.${key}`;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
