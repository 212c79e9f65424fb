// The `rxs` command as one bundle per command (dist/bundle/), made from the compiled modules in
// dist/: loading about a hundred small modules one by one was a third of an unchanged poll's time
// (0.29 s, bundled 0.20 s, on two cores). The server stays a package of its own (it finds its web
// assets beside its modules and loads native drivers), and so do packages that are resolved from
// where they are installed (exceljs, found from the bundle's folder: hence a dependency of the CLI
// too) or are native (better-sqlite3, pg).
// pdfkit finds its standard fonts through its package.json "imports", which a bundle does not have,
// and the document fonts (@fontsource/*) are files found from the bundle's folder: both are
// dependencies of the CLI too.
const EXTERNAL = [
  /^node:/,
  /^@rxs\/server(\/|$)/,
  /^better-sqlite3$/,
  /^pg(\/|$)/,
  /^exceljs(\/|$)/,
  /^pdfkit(\/|$)/,
];

export default {
  input: { bin: 'dist/bin.js' },
  platform: 'node',
  external: (id) => EXTERNAL.some((pattern) => pattern.test(id)),
  // cleanDir: the chunks of an earlier build (their names carry a hash) are removed, not left behind.
  output: { dir: 'dist/bundle', format: 'esm', sourcemap: true, cleanDir: true },
  logLevel: 'warn',
};
