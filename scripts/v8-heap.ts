/**
 * Garbage-collection tuning of the service process, imported first by
 * scripts/start.ts so it applies from the first collection on.
 *
 * With a large heap limit (the default is ~4 GB on a machine with 16 GB or
 * more) V8 lets the old generation grow to 2-4x its live size before a full
 * collection: after a few audits the service sat at 260-340 MB resident, of
 * which 60-100 MB was garbage waiting (issue 9, docs/benchmarks.md "Service
 * memory during the audits"). Growing it by 25 % of the live size instead
 * keeps it at ~200-225 MB; the heap limit is unchanged and the audits' CPU
 * time stayed within the run-to-run noise. V8_HEAP_GROWING_PERCENT=0 restores
 * V8's own heuristics.
 */
import v8 from 'node:v8';

const heapGrowing = process.env.V8_HEAP_GROWING_PERCENT ?? '25';
if (!/^\d{1,4}$/.test(heapGrowing)) throw new Error(`V8_HEAP_GROWING_PERCENT must be a whole number of percent (got "${heapGrowing}")`);
if (Number(heapGrowing) > 0) v8.setFlagsFromString(`--heap-growing-percent=${heapGrowing}`);
