/** Lints spec/'s root documents with Redocly's recommended rules (the same engine as `redocly lint`): the current REST document, the deprecated version 1 lists, the MCP transports. */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createConfig, lint } from '@redocly/openapi-core';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const config = await createConfig({
  extends: ['recommended'],
  rules: {
    // Public paths (/health, /ready) deliberately have `security: []`.
    'security-defined': 'error',
    'operation-4xx-response': 'error',
    'no-unused-components': 'warn',
    // The first server is deliberately the local `npm start` address (the served document puts its own origin first).
    'no-server-example.com': 'off',
  },
});
// The liveness probe has no client error to document: no parameters, no body, never rate limited.
const NO_4XX_BY_DESIGN = new Set(['spec/paths/health.yaml#/health/get/responses']);
const where = (p: Awaited<ReturnType<typeof lint>>[number]) =>
  p.location.map((l) => `${path.relative(root, l.source.absoluteRef)}${l.pointer ?? ''}`).join(', ');
const ROOTS = ['spec/openapi.yaml', 'spec/v1.yaml', 'spec/mcp.yaml'];
const problems = (await Promise.all(ROOTS.map((ref) => lint({ ref: path.join(root, ref), config }))))
  .flat()
  .filter((p) => !(p.ruleId === 'operation-4xx-response' && NO_4XX_BY_DESIGN.has(where(p))));
const errors = problems.filter((p) => p.severity === 'error');
for (const p of problems) console.log(`${p.severity}: ${p.message} [${p.ruleId}] ${where(p)}`);
if (errors.length) {
  console.error(`spec lint: ${errors.length} error(s)`);
  process.exit(1);
}
console.log(`spec lint: ok (${problems.length} warning(s))`);
