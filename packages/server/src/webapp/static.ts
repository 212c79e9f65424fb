import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** packages/web/dist, seen from src/webapp (tests) and from dist/webapp (the build) alike. */
export const DEFAULT_WEB_DIR = fileURLToPath(new URL('../../../web/dist/', import.meta.url));

/** Paths the browser app never takes: the services, the API reference, health, and its own API. */
const RESERVED =
  /^\/(kt|records|traces|baselines|api|assets)(\/|$)|^\/docs(\/|$)|^\/openapi\.json$|^\/healthz$/;

const ROOT_FILE_TYPES: Record<string, string> = {
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
};

/**
 * form-js and its editor set inline styles, hence 'unsafe-inline' for styles only; scripts come
 * from this origin alone, and no other site may frame the app.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** A source map, under any query string. */
export function isSourceMap(pathName: string): boolean {
  return /\.map$/i.test(pathName.split('?')[0]!);
}

function isHtmlNavigation(request: FastifyRequest): boolean {
  return (request.headers.accept ?? '').includes('text/html');
}

/**
 * Serves the built web app: hashed assets under /assets/ (cached for good), a few root files, and
 * index.html for every other browser navigation (the app routes on the client). API clients that
 * do not ask for HTML still get the JSON 404 on unknown paths.
 */
export async function registerWebAppFiles(app: FastifyInstance, webDir: string): Promise<void> {
  const assets = join(webDir, 'assets');
  if (existsSync(assets)) {
    await app.register(fastifyStatic, {
      root: assets,
      prefix: '/assets/',
      decorateReply: false,
      index: false,
      immutable: true,
      maxAge: '365d',
      // Source maps would hand anyone the app's full source: they are for development builds only.
      allowedPath: (pathName) => !isSourceMap(pathName),
    });
  }
  const rootFiles = new Map<string, string>();
  if (existsSync(webDir)) {
    for (const name of readdirSync(webDir)) {
      const type = ROOT_FILE_TYPES[extname(name)];
      if (type && statSync(join(webDir, name)).isFile()) rootFiles.set(`/${name}`, type);
    }
  }

  const serve = async (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0]!;
    if (RESERVED.test(path)) return reply.callNotFound();
    const rootType = rootFiles.get(path);
    if (rootType) {
      return reply
        .type(rootType)
        .header('cache-control', 'public, max-age=3600')
        .send(readFileSync(join(webDir, path.slice(1))));
    }
    if (!isHtmlNavigation(request)) return reply.callNotFound();
    const index = join(webDir, 'index.html');
    void reply
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-cache')
      .header('content-security-policy', CONTENT_SECURITY_POLICY)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'same-origin');
    if (!existsSync(index)) {
      return reply
        .code(503)
        .send(
          '<!doctype html><meta charset="utf-8"><title>RXS</title><p>The web app is not built. Run <code>npm run build:web</code> and restart <code>rxs serve</code>.</p>',
        );
    }
    return reply.send(readFileSync(index));
  };
  app.get('/', { schema: { hide: true } }, serve);
  app.get('/*', { schema: { hide: true } }, serve);
}
