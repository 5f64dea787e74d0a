#!/usr/bin/env node
/**
 * The type check and ESLint on one TypeScript program (`npm run check:ts`; `npm test`'s pretest
 * and `npm run checks` run it). `tsc --noEmit -p tsconfig.json` and type-aware `eslint .` each
 * build the program of the whole tree and type-check it; here it is built once, its diagnostics
 * are reported as tsc reports them, then ESLint lints the same files as `eslint .` with that
 * program (typescript-eslint's `parserOptions.programs` instead of `projectService`), so the
 * rules ask a checker that has already checked everything (issue 39: the suite's CPU time).
 * The rules and the program's options are eslint.config.js's and tsconfig.json's, unchanged.
 *
 * Prints the type errors (tsc's format: with colour and source context on a terminal, one line
 * each otherwise) and ESLint's findings (stylish formatter); exits 1 when either finds an error.
 * `npm run typecheck` and `npm run lint` still run tsc and ESLint alone.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import ts from 'typescript';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const started = process.hrtime.bigint();
const elapsed = () => {
  const { user, system } = process.cpuUsage();
  return `${(Number(process.hrtime.bigint() - started) / 1e9).toFixed(1)} s (${((user + system) / 1e6).toFixed(1)} CPU-s)`;
};

// ---------------------------------------------------------------- the program, as tsc -p builds it
const formatHost = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => root, getNewLine: () => ts.sys.newLine };
const pretty = Boolean(process.stdout.isTTY);
const formatDiagnostics = (list) => (pretty ? ts.formatDiagnosticsWithColorAndContext(list, formatHost) : ts.formatDiagnostics(list, formatHost));

const configPath = path.join(root, 'tsconfig.json');
let unrecoverable;
const parsed = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => (unrecoverable = d) });
if (!parsed) {
  process.stdout.write(formatDiagnostics(unrecoverable ? [unrecoverable] : []));
  console.log(`[typecheck-lint] type check: tsconfig.json cannot be read`);
  process.exit(1);
}
const program = ts.createProgram({
  rootNames: parsed.fileNames,
  options: parsed.options,
  projectReferences: parsed.projectReferences,
  configFileParsingDiagnostics: ts.getConfigFileParsingDiagnostics(parsed),
});

// tsc's order (emitFilesAndReportErrors): the semantic check only when the syntax, options and globals are clean.
const diagnostics = [...program.getConfigFileParsingDiagnostics()];
const configDiagnostics = diagnostics.length;
diagnostics.push(...program.getSyntacticDiagnostics());
if (diagnostics.length === configDiagnostics) {
  diagnostics.push(...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics());
  if (diagnostics.length === configDiagnostics) diagnostics.push(...program.getSemanticDiagnostics());
  const declarations = parsed.options.declaration || parsed.options.composite;
  if (declarations && diagnostics.length === configDiagnostics) diagnostics.push(...program.getDeclarationDiagnostics());
}
const reported = ts.sortAndDeduplicateDiagnostics(diagnostics);
const typeErrors = reported.filter((d) => d.category === ts.DiagnosticCategory.Error).length;
if (reported.length) process.stdout.write(formatDiagnostics(reported));
console.log(
  `[typecheck-lint] type check (tsc --noEmit -p tsconfig.json, ${program.getRootFileNames().length} files): ` +
    `${typeErrors ? `FAILED, ${typeErrors} error${typeErrors === 1 ? '' : 's'}` : 'passed'} at ${elapsed()}`,
);

// ---------------------------------------------------------------- ESLint on that program
const eslint = new ESLint({
  cwd: root,
  // Only the TypeScript files' parser options change: the config's own `projectService` would build a second program.
  overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parserOptions: { programs: [program], projectService: false } } }],
});
const results = await eslint.lintFiles(['.']);
const formatter = await eslint.loadFormatter('stylish');
const text = await formatter.format(results);
if (text) process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
const lintErrors = results.reduce((n, r) => n + r.errorCount, 0);
const lintWarnings = results.reduce((n, r) => n + r.warningCount, 0);
console.log(
  `[typecheck-lint] ESLint (eslint ., ${results.length} files): ` +
    `${lintErrors ? `FAILED, ${lintErrors} error${lintErrors === 1 ? '' : 's'}` : 'passed'}` +
    `${lintWarnings ? `, ${lintWarnings} warning${lintWarnings === 1 ? '' : 's'}` : ''} at ${elapsed()}`,
);

process.exitCode = typeErrors || lintErrors ? 1 : 0;
