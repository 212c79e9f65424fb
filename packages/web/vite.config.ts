import { defineConfig } from 'vite';

// `rxs serve` serves dist/ at `/`; `npm run dev -w packages/web` proxies the API to a running server.
export default defineConfig({
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: true,
    // form-js and its editor are loaded on demand, each as its own chunk.
    chunkSizeWarningLimit: 1600,
  },
  server: {
    proxy: Object.fromEntries(
      ['/api', '/kt', '/records', '/traces', '/docs', '/openapi.json', '/healthz'].map((path) => [
        path,
        process.env.RXS_DEV_API ?? 'http://127.0.0.1:8080',
      ]),
    ),
  },
});
