/**
 * The unit tests (test/unit/*.test.ts: pure functions, no database, no service) run in this one
 * process; package.json's tap config excludes that directory from the file list. On its own each
 * file paid about a second of CPU for Node and the TypeScript loader to start, for a tenth of a
 * second of tests. One of them alone still runs with `npx tap test/unit/<name>.test.ts`.
 */
import { readdirSync } from 'node:fs';

const dir = new URL('./unit/', import.meta.url);
for (const file of readdirSync(dir)
  .filter((f) => f.endsWith('.test.ts'))
  .sort()) {
  await import(new URL(file, dir).href);
}
