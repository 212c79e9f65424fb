/** A browser-like client of the web app's `/api/...`: a session cookie and the CSRF header. */
export interface WebResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface WebClient {
  readonly cookie: string | undefined;
  readonly csrfToken: string | undefined;
  request<T = any>(
    method: string,
    path: string,
    options?: { body?: unknown; headers?: Record<string, string>; csrf?: string | null },
  ): Promise<WebResponse<T>>;
  signIn(email: string, password: string): Promise<WebResponse>;
}

export function webClient(baseUrl: string): WebClient {
  let cookie: string | undefined;
  let csrfToken: string | undefined;
  const client: WebClient = {
    get cookie() {
      return cookie;
    },
    get csrfToken() {
      return csrfToken;
    },
    async request(method, path, options = {}) {
      const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
      if (cookie) headers.cookie = cookie;
      const csrf = options.csrf === undefined ? csrfToken : options.csrf;
      if (method !== 'GET' && csrf) headers['x-csrf-token'] = csrf;
      let body: string | undefined;
      if (options.body !== undefined) {
        body = JSON.stringify(options.body);
        headers['content-type'] ??= 'application/json';
      }
      const response = await fetch(`${baseUrl}${path}`, { method, headers, body, redirect: 'manual' });
      const setCookie = response.headers.get('set-cookie');
      const session = setCookie && /rxs_session=([^;]*)/.exec(setCookie);
      if (session) cookie = session[1] ? `rxs_session=${session[1]}` : undefined;
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      return { status: response.status, headers: response.headers, body: parsed as never, text };
    },
    async signIn(email, password) {
      const response = await client.request('POST', '/api/session', { body: { email, password } });
      if (response.status === 200) csrfToken = response.body.csrfToken;
      return response;
    },
  };
  return client;
}
