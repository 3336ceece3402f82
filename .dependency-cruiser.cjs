/**
 * The import direction of eventloom, checked by `npm test` (test/architecture/layers.test.ts):
 *   cli / main / server-assembly / index  →  http  →  domains  →  projections  →  runtime  →  log
 * machines/ import only xstate; shared leaves (errors, version, feeds, kernel, config, and the
 * route and module contract in src/contract) import nothing above them; no cycles between files.
 * Inside log/ the stores sit side by side (memory/, level/, pg/): none imports another, and the
 * store-neutral files import none of them, but for openLog (open.ts) and the module's surface (index.ts).
 */
const DOMAINS = 'src/(workflows|agents|memory|tools|mcp|observability|protocols)/';
module.exports = {
  forbidden: [
    { name: 'no-cycles', severity: 'error', comment: 'no import cycle between files', from: {}, to: { circular: true } },
    {
      name: 'machines-are-pure',
      severity: 'error',
      comment: 'machines/ import only xstate (and each other)',
      from: { path: '^machines/' },
      to: { pathNot: ['^machines/', '^node_modules/xstate/'] },
    },
    {
      name: 'log-is-the-bottom',
      severity: 'error',
      from: { path: '^src/log/' },
      to: { path: '^src/', pathNot: ['^src/log/', '^src/errors\\.ts$'] },
    },
    {
      name: 'stores-side-by-side',
      severity: 'error',
      comment: 'a store imports the store-neutral log files, never another store',
      from: { path: '^src/log/(memory|level|pg)/' },
      to: { path: '^src/log/(memory|level|pg)/', pathNot: '^src/log/$1/' },
    },
    {
      name: 'log-core-is-store-neutral',
      severity: 'error',
      comment: 'what every store shares knows no store; openLog and the surface name them',
      from: { path: '^src/log/[^/]+\\.ts$', pathNot: '^src/log/(open|index)\\.ts$' },
      to: { path: '^src/log/(memory|level|pg)/' },
    },
    {
      name: 'runtime-uses-only-the-log',
      severity: 'error',
      from: { path: '^src/runtime/' },
      to: { path: '^src/', pathNot: ['^src/(runtime|log|kernel)/', '^src/errors\\.ts$'] },
    },
    {
      name: 'projections-below-domains',
      severity: 'error',
      from: { path: '^src/projections/' },
      to: { path: '^src/', pathNot: ['^src/(projections|runtime|log|feeds|kernel)/', '^src/errors\\.ts$'] },
    },
    {
      name: 'domains-below-the-edge',
      severity: 'error',
      comment: 'domains never import http/ or the composition root',
      from: { path: DOMAINS },
      to: { path: ['^src/http/', '^src/(main|server-assembly|index)\\.ts$', '^src/cli/'] },
    },
    {
      name: 'edge-below-the-root',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: ['^src/(main|server-assembly|index)\\.ts$', '^src/cli/'] },
    },
    {
      name: 'leaves-import-no-layer',
      severity: 'error',
      comment: 'shared leaves and the module contract sit below every layer that uses them',
      from: { path: ['^src/(errors|version)\\.ts$', '^src/(feeds|config|contract|kernel)/'] },
      to: { path: ['^src/http/', DOMAINS, '^src/(main|server-assembly|index)\\.ts$', '^src/cli/'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: ['^dist/', '^test/', '^bench/', '^examples/'] },
  },
};
