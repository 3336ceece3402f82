// @ts-check
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['dist/**', 'node_modules/**', 'bench/peers/**', 'bench/results/**', 'docs/**', 'coverage/**', '**/*.d.mts'],
  },
  // TypeScript: the type-checked recommended rules, with the project's tsconfig through the project service
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
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
