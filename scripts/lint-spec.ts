/** Lints spec/ with Redocly's recommended rules (the same engine as `redocly lint`). */
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
const problems = await lint({ ref: path.join(root, 'spec/openapi.yaml'), config });
const errors = problems.filter((p) => p.severity === 'error');
for (const p of problems) {
  const where = p.location.map((l) => `${path.relative(root, l.source.absoluteRef)}${l.pointer ?? ''}`).join(', ');
  console.log(`${p.severity}: ${p.message} [${p.ruleId}] ${where}`);
}
if (errors.length) {
  console.error(`spec lint: ${errors.length} error(s)`);
  process.exit(1);
}
console.log(`spec lint: ok (${problems.length} warning(s))`);
