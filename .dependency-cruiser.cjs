/**
 * The import direction of eventloom, checked by `npm test` (test/architecture/layers.test.ts). The
 * layers come from scripts/layer-order.cjs, top to bottom:
 *   composition root, cli → testing → http → domains (peers) → config → contract → projections
 *   → runtime → log → kernel → errors.ts, version.ts, package-root.ts
 * Every folder imports only its own layer and the layers below; a domain imports no other domain
 * (cross-domain needs go through ports wired by src/server-assembly.ts, or the module contract);
 * machines/ import only xstate; no cycles between files. The folder-level checks (no two folders
 * importing each other, no arrow back up) are asserted by the test over the same cruise.
 * Inside log/ the stores sit side by side (memory/, level/, pg/): none imports another, and the
 * store-neutral files import none of them, but for openLog (open.ts) and the module's surface (index.ts).
 */
const { DOMAINS, LAYERS, folderPattern } = require('./scripts/layer-order.cjs');

const domains = `^src/(${DOMAINS.join('|')})/`;

/** One rule per layer below the root: its folders import nothing of a layer above. */
const layerRules = LAYERS.slice(1).map((layer, i) => ({
  name: `${layer.id}-imports-only-below`,
  severity: 'error',
  comment: `${layer.name} import only their own layer and the layers below it`,
  from: { path: layer.folders.map(folderPattern) },
  to: { path: '^src/', pathNot: LAYERS.slice(i + 1).flatMap((l) => l.folders.map(folderPattern)) },
}));

module.exports = {
  forbidden: [
    { name: 'no-cycles', severity: 'error', comment: 'no import cycle between files', from: {}, to: { circular: true } },
    {
      name: 'machines-are-pure',
      severity: 'error',
      comment: 'machines/ import only xstate (and each other)',
      from: { path: '^machines/' },
      to: { pathNot: ['^machines/', '(^|/)node_modules/xstate/'] },
    },
    {
      name: 'domains-are-peers',
      severity: 'error',
      comment: 'a domain imports no other domain: it declares a port the composition root wires, or uses the module contract',
      from: { path: domains },
      to: { path: domains, pathNot: '^src/$1/' },
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
    ...layerRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: ['^dist/', '^test/', '^bench/', '^examples/'] },
  },
};
