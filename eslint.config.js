// ESLint 9 flat config (issue 34). `npm run lint` runs it and `npm test` runs that, so a finding
// fails CI: every rule here is an error, and so is a disable comment that no longer disables anything.
//
// - TypeScript (lib/, handlers/, scripts/, test/): typescript-eslint's type-aware
//   recommendedTypeChecked set, on the program of tsconfig.json (projectService finds it).
// - Plain JavaScript (scripts/*.mjs, test/helpers/*.cjs): ESLint's recommended set with Node's globals.
// - Not linted: generated/ (made by `npm run generate`, checked by `npm run check:generated`),
//   dependencies, caches and the embedded engine's Java build output.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores(['generated/', 'node_modules/', '.cache/', '.venv/', '.tap/', 'data/', 'scripts/embedded-mongo/target/']),
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    extends: [js.configs.recommended],
    languageOptions: { globals: globals.node },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
  },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // House rule: no `any` at module boundaries in lib/ and handlers/ (recommended has it as an
      // error already; said here so that nobody turns it off for the whole tree).
      '@typescript-eslint/no-explicit-any': 'error',
      // A name starting with `_` is deliberately unused (a parameter kept for a signature, a
      // rest sibling that drops a property from a copy).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // Fastify decides by the returned promise: a plugin without `done` must be async, an async
      // hook must not call `done`, a handler may return its answer from an async function; the MCP
      // SDK's request handlers and our own Promise-returning APIs (registerMcp, getHealth) do the
      // same, and `async` turns a throw into a rejection for their callers. An async function
      // without `await` is deliberate here (~20 in lib/, handlers/, scripts/, ~200 tap callbacks in test/).
      '@typescript-eslint/require-await': 'off',
      // A `let` assigned once but read before that (a timer a closure clears, set after the
      // closure is made) cannot be a const: it would throw in its temporal dead zone.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // Tests read JSON answers (`type Json = Record<string, any>`, `res.json()`) and poke at
      // documents straight from MongoDB: typing every answer would restate the OpenAPI schema the
      // tests check answers against (assertConforms), so `any` is allowed here and only here.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // tap's subtests: `t.test(name, fn)` (and t.only/t.skip/t.todo) return a promise that tap
      // itself tracks (the parent waits for it and a failure fails the parent); tap's documented
      // style is not to await it. Every other promise in a test must still be awaited or voided.
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafePromises: [{ from: 'package', package: '@tapjs/core', name: 'PromiseWithSubtest' }] },
      ],
    },
  },
);
