// @ts-check
/**
 * ESLint over the TypeScript sources with typescript-eslint's type-checked recommended rules, and
 * over the plain JavaScript (build scripts, bin/, the browser console) with the JS recommended rules.
 * `npm run lint` runs it with a cache (node_modules/.cache/eslint): a type-checked run over the whole
 * tree takes minutes on a 2-core machine, a cached run only re-checks the files that changed.
 * Each rule turned off or narrowed below says why, next to it.
 */
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * Files that read log record payloads, JSON bodies or library values typed `any` (mostly
 * `rec.data as Record<string, any>` by event kind) and were written before this lint existed.
 * The `no-unsafe-*` and `no-explicit-any` rules hold for every other file; take a file off this
 * list once its reads are typed (`unknown` plus a narrowing, or the event's data type).
 */
const UNTYPED_PAYLOAD_READERS = [
  'src/agents/approvals.ts',
  'src/kernel/json-schema-sample.ts',
  'src/agents/ops-text.ts',
  'src/agents/routes.ts',
  'src/agents/tool-adapter.ts',
  'src/contract/routes.ts',
  'src/http/auth/config.ts',
  'src/http/auth/console-guard.ts',
  'src/http/auth/jwt.ts',
  'src/kernel/time.ts',
  'src/log/level/level-log.ts',
  'src/log/memory/memory-log.ts',
  'src/log/pg/pg-commit.ts',
  'src/log/pg/pg-log.ts',
  'src/log/record-codec.ts',
  'src/memory/dot-kernel.ts',
  'src/memory/semantic-index.ts',
  'src/memory/store.ts',
  'src/memory/working-memory.ts',
  'src/observability/live-runs.ts',
  'src/observability/otlp-export.ts',
  'src/observability/ring.ts',
  'src/observability/traces.ts',
  'src/runtime/actor-host.ts',
  'src/runtime/pure-transition.ts',
  'src/kernel/define-tool.ts',
  'src/workflows/commands.ts',
  'src/workflows/engine.ts',
  'src/workflows/events.ts',
  'src/workflows/executions-view.ts',
  'src/workflows/history-replay.ts',
  'src/workflows/module.ts',
  'src/workflows/routes.ts',
  'src/workflows/event-waits-index.ts',
  'src/workflows/replay-plan.ts',
  'src/workflows/step-runner.ts',
  'src/workflows/steps/agent.ts',
  'src/workflows/steps/registry.ts',
  'src/workflows/steps/tap.ts',
  'src/workflows/steps/then.ts',
  'src/workflows/steps/sleep.ts',
  'src/workflows/steps/sleep-until.ts',
  'src/workflows/steps/wait-for-event.ts',
  'src/workflows/types.ts',
];

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      // other servers' code, installed and measured by bench:peers
      'bench/peers/**',
      'bench/results/**',
      'docs/**',
      'coverage/**',
      // declarations of the build scripts for TypeScript callers, checked by tsc
      '**/*.d.mts',
    ],
  },
  // TypeScript: the type-checked recommended rules, typed by the project's tsconfig.json
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        projectService: {
          // the few TypeScript files tsconfig.json leaves out (bench helpers run as child processes, a
          // screenshot script) are typed with the default options
          allowDefaultProject: ['bench/lib/broadcaster.ts', 'bench/lib/cluster-config.ts', 'bench/lib/pg-log-writer.ts', 'bench/lib/steady-retention-config.ts', 'scripts/console-screenshots.ts'],
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // a `_` prefix marks a parameter, binding or rest sibling kept on purpose (a signature, an omitted key)
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // an async method without `await` implements a Promise-returning interface (EventLog, KeyValueStore,
      // ServerModule.start…): `async` turns its throws into rejections, which callers rely on
      '@typescript-eslint/require-await': 'off',
      // rejections and throws forward a caught error or a callback's error as they got it (typed unknown)
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      '@typescript-eslint/only-throw-error': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      // `let [len, p] = …` where only p moves on; a `let` a closure reads before its one assignment
      'prefer-const': ['error', { destructuring: 'all', ignoreReadBeforeAssign: true }],
      // logs, spans, reports and error messages print values of any shape with String(): an object
      // printing as [object Object] is accepted there, and such values are typed unknown, not a class
      '@typescript-eslint/no-base-to-string': 'off',
      // unions like `'builtin' | string` or `unknown | Promise<unknown>` spell out, for readers and
      // editors' completion, the values a field takes, though the type system folds them
      '@typescript-eslint/no-redundant-type-constituents': 'off',
      // the objects the server passes around are closures made by factory functions, declared with
      // method syntax in interfaces (`emit(e): void`); passing such a method as a value is safe, and the
      // rule cannot tell them from class methods that need their `this`
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    files: UNTYPED_PAYLOAD_READERS,
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
    },
  },
  // the rule calls these assertions unnecessary, but they steer inference (xstate's setup types, the
  // rows of an it.each): with them removed tsc fails
  {
    files: ['machines/**/*.ts', 'test/agents/agent-run.machine.test.ts'],
    rules: { '@typescript-eslint/no-unnecessary-type-assertion': 'off' },
  },
  // tests, benchmarks and the screenshot script read JSON responses and SSE frames as `any` and poke at internals on purpose
  {
    files: ['test/**/*.ts', 'bench/**/*.ts', 'scripts/console-screenshots.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      // assertions and log lines print whatever a response held
      '@typescript-eslint/restrict-template-expressions': 'off',
      // tests await together calls that answer at once or with a promise (feeds' firstRecord, attachSse)
      '@typescript-eslint/await-thenable': 'off',
      // the SSE parsers in test helpers set two fields in one comma expression
      '@typescript-eslint/no-unused-expressions': 'off',
    },
  },
  // plain JavaScript run by Node: the build scripts, bin/, this file
  {
    files: ['**/*.mjs', '**/*.js'],
    ignores: ['console/src/**'],
    extends: [js.configs.recommended],
    languageOptions: { globals: globals.node },
  },
  // the console: plain browser JavaScript (Preact + htm), bundled by esbuild; no types to check
  {
    files: ['console/src/**/*.js'],
    extends: [js.configs.recommended],
    languageOptions: { globals: globals.browser },
  },
);
