/**
 * How every test process and every script a test spawns runs TypeScript: `--import` this file
 * (package.json "tap"."node-arg", test/helpers/service.ts TS_IMPORT). It registers one `load` hook
 * (ts-loader-hooks.mjs) and turns on source maps, so stack traces name the .ts lines.
 *
 * Why not tsx (the npm scripts keep it): the project imports its sources with explicit `.ts`
 * extensions and no path aliases, so Node's own resolution finds every file and only the
 * transform is missing. tsx's hooks also resolve every import themselves and load tsx's
 * CommonJS/ESM machinery in both threads: importing handlers/app.ts cost 3.6 CPU-s with tsx, 2.7
 * with this loader (issue 39; ~119 tap files and every spawned service pay it).
 */
import { register } from 'node:module';

process.setSourceMapsEnabled(true);
register('./ts-loader-hooks.mjs', import.meta.url);
