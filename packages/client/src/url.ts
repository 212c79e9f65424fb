/** Query values as the services take them; `undefined` leaves the parameter out. */
export type QueryValues = Record<string, string | number | boolean | undefined | null>;

/**
 * Checks and normalises a service base URL. It may carry a path prefix (`https://host/api/rxs`);
 * a trailing slash is dropped, so paths join the same way with or without it.
 */
export function normalizeBaseUrl(value: string, name: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError(`${name} "${value}" is not a URL; expected e.g. https://rxs.example.com`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`${name} "${value}" must be an http or https URL`);
  }
  if (url.username || url.password) {
    throw new TypeError(`${name} must not carry a user name or password; the API key is what authenticates`);
  }
  if (url.search || url.hash) {
    throw new TypeError(`${name} must not carry a query or fragment; give the base address only`);
  }
  url.pathname = url.pathname.replace(/\/+$/, '');
  return url;
}

/** `base` + `path` (which starts with `/`), keeping the base's path prefix, plus the query. */
export function joinUrl(base: URL, path: string, query?: QueryValues): URL {
  const url = new URL(base.href);
  url.pathname = `${base.pathname.replace(/\/+$/, '')}${path}`;
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === null) continue;
    url.searchParams.set(key, String(value));
  }
  return url;
}

/**
 * One path segment from a caller's value (an id). Empty values and dot segments are refused: they
 * would silently address another resource (`getTopic('')` would list topics, `..` the parent).
 */
export function pathSegment(value: string, name: string): string {
  if (typeof value !== 'string' || value.trim() === '' || value === '.' || value === '..') {
    throw new TypeError(`${name} must be a non-empty id, got ${JSON.stringify(value)}`);
  }
  return encodeURIComponent(value);
}

/**
 * The targets of a `Link` header by relation (RFC 8288: `<url>; rel="next"`, several links comma
 * separated, parameters quoted or not, quoted values may hold commas and semicolons).
 */
export function parseLinkHeader(header: string | null | undefined): Map<string, string> {
  const links = new Map<string, string>();
  if (!header) return links;
  let i = 0;
  while (i < header.length) {
    const open = header.indexOf('<', i);
    if (open < 0) break;
    const close = header.indexOf('>', open);
    if (close < 0) break;
    const target = header.slice(open + 1, close);
    // Parameters up to the next comma outside quotes.
    let j = close + 1;
    let params = '';
    let quoted = false;
    for (; j < header.length; j++) {
      const char = header[j];
      if (char === '"') quoted = !quoted;
      else if (char === '\\' && quoted) {
        params += char + (header[j + 1] ?? '');
        j++;
        continue;
      } else if (char === ',' && !quoted) break;
      params += char;
    }
    i = j + 1;
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;"]+))/i.exec(params);
    const relations = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/).filter(Boolean);
    for (const relation of relations) if (!links.has(relation)) links.set(relation, target);
  }
  return links;
}

/**
 * The `rel="next"` page of a response, resolved against the URL that was requested (our services
 * send query-only references such as `<?limit=100&after=...>`). Undefined when there is none.
 * A link to another origin is refused: following it would send the API key to that host.
 */
export function nextPageUrl(linkHeader: string | null, requested: URL): URL | undefined {
  const target = parseLinkHeader(linkHeader).get('next');
  if (target === undefined) return undefined;
  let next: URL;
  try {
    next = new URL(target, requested);
  } catch {
    throw new Error(`the Link header's next page "${target}" is not a valid URL`);
  }
  if (next.origin !== requested.origin) {
    throw new Error(
      `the Link header's next page points to another origin (${next.origin}); it is not followed, so the API key is not sent there`,
    );
  }
  return next;
}
