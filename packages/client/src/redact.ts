/**
 * Keeps the API key out of every message the client produces. The key travels only in the
 * `X-API-Key` header, but servers, proxies and custom `fetch` functions may echo it back in a body
 * or an error, so every text that reaches an error message or a retry report passes through here.
 */
export class Redactor {
  private readonly needles: string[];

  constructor(secret: string) {
    // A secret too short to be a real key would turn every message into confetti; such a key is
    // refused by createClient anyway.
    const variants = secret.length >= 4 ? [secret, encodeURIComponent(secret)] : [];
    this.needles = [...new Set(variants)];
  }

  text(value: string): string {
    let result = value;
    for (const needle of this.needles) result = result.split(needle).join('[redacted]');
    return result;
  }
}

/** A URL as it may be shown: without user name and password, which would be credentials. */
export function displayUrl(url: URL | string): string {
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url) : new URL(url.href);
  } catch {
    return String(url);
  }
  parsed.username = '';
  parsed.password = '';
  return parsed.href;
}
