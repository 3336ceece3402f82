/**
 * The layers of src/, top to bottom: the one list that .dependency-cruiser.cjs turns into rules and
 * scripts/layers.mjs draws into docs/design-notes.md. An import may go sideways within a layer or
 * down, never up; the domains are peers that import no other domain. A folder is src/<folder>/;
 * `root` is the files directly in src/ other than the leaf files of the last layer.
 */
const DOMAINS = ['workflows', 'agents', 'memory', 'tools', 'mcp', 'observability', 'protocols', 'cluster', 'schedules'];

const LAYERS = [
  // the `eventloom` command (cli/) starts the server as main.ts does, so it shares the root's layer
  { id: 'root', name: 'composition root and the command', folders: ['root', 'cli'] },
  { id: 'testing', name: 'testing helper', folders: ['testing'] },
  { id: 'edge', name: 'edge', folders: ['http'] },
  { id: 'domains', name: 'domains (peers)', folders: DOMAINS },
  { id: 'config', name: 'config', folders: ['config'] },
  { id: 'contract', name: 'module contract', folders: ['contract'] },
  { id: 'projections', name: 'projection engine', folders: ['projections'] },
  { id: 'runtime', name: 'actor host', folders: ['runtime'] },
  { id: 'log', name: 'event log', folders: ['log'] },
  { id: 'kernel', name: 'kernel', folders: ['kernel'] },
  { id: 'leaves', name: 'leaf files', folders: ['errors.ts', 'version.ts', 'package-root.ts'] },
];

/** The path pattern of a folder of LAYERS (a leaf file is matched exactly). */
const folderPattern = (folder) => (folder.endsWith('.ts') ? `^src/${folder.replace('.', '\\.')}$` : `^src/${folder}/`);

module.exports = { DOMAINS, LAYERS, folderPattern };
