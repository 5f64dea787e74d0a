import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { QueueDepth } from '../jobs/queue-depth.ts';
import type { ServiceMetrics } from './service-metrics.ts';

/**
 * A registry's scrape in the text exposition format. prom-client writes a NaN sample (the event-loop lag's mean before
 * its first sample) as `Nan`, which the format spells `NaN` and parsers refuse otherwise: spelled so here.
 */
export async function exposition(registry: Registry): Promise<string> {
  return spellNaN(await registry.metrics());
}

/** The text with each sample value `Nan` (a line's last field) written `NaN`. */
export const spellNaN = (text: string): string => text.replace(/ Nan$/gm, ' NaN');

/** Latency buckets (seconds) of HTTP requests and MCP tool calls: a list page takes milliseconds, a year's report seconds. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** What a scrape reads from the database: whether it answered a ping (and how fast), and the job queues. */
export interface DatabaseReading {
  up: boolean;
  /** Ping round trip; null when it did not answer. */
  pingSeconds: number | null;
  /** One entry per Agenda job name; empty when the database is down. */
  queues: { job: string; depth: QueueDepth }[];
}

/**
 * The service's own metrics (prefix `freight_`) in `registry`, recorded through ServiceMetrics;
 * the database gauges are read on scrape through `readDatabase` (lib/metrics/reuse-reading.ts
 * keeps one reading for all of them).
 */
export function prometheusMetrics(registry: Registry, readDatabase: () => Promise<DatabaseReading>): ServiceMetrics {
  const registers = [registry];
  const toolCalls = new Counter({
    name: 'freight_mcp_tool_calls_total',
    help: 'MCP tool calls by tool and outcome',
    labelNames: ['tool', 'outcome'],
    registers,
  });
  const toolSeconds = new Histogram({
    name: 'freight_mcp_tool_call_duration_seconds',
    help: 'MCP tool call duration by tool',
    labelNames: ['tool'],
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const importedFiles = new Counter({
    name: 'freight_import_files_total',
    help: 'Imported CFDI files by kind and status (created, updated, skipped, rejected)',
    labelNames: ['kind', 'status'],
    registers,
  });
  const webhookAttempts = new Counter({
    name: 'freight_webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts by outcome (succeeded; retrying: failed, another attempt is scheduled; failed: given up)',
    labelNames: ['outcome'],
    registers,
  });
  const exportRuns = new Counter({
    name: 'freight_export_runs_total',
    help: 'Runs of export jobs by outcome (ready; failed: given up; retrying: the run threw, another is scheduled)',
    labelNames: ['outcome'],
    registers,
  });
  new Gauge({
    name: 'freight_database_up',
    help: 'Whether the database answered a ping (1) or not (0)',
    registers,
    async collect() {
      this.set((await readDatabase()).up ? 1 : 0);
    },
  });
  new Gauge({
    name: 'freight_database_ping_seconds',
    help: 'Round trip of a database ping (absent while it does not answer)',
    registers,
    async collect() {
      const { pingSeconds } = await readDatabase();
      this.reset();
      if (pingSeconds !== null) this.set(pingSeconds);
    },
  });
  new Gauge({
    name: 'freight_job_queue_jobs',
    help: 'Background jobs (Agenda) by job name and state: due (waiting for a worker) and running',
    labelNames: ['job', 'state'],
    registers,
    async collect() {
      const { queues } = await readDatabase();
      this.reset();
      for (const { job, depth } of queues) {
        this.set({ job, state: 'due' }, depth.due);
        this.set({ job, state: 'running' }, depth.running);
      }
    },
  });
  return {
    toolCall(tool, outcome, seconds) {
      toolCalls.inc({ tool, outcome });
      toolSeconds.observe({ tool }, seconds);
    },
    importedFile(kind, status) {
      importedFiles.inc({ kind, status });
    },
    webhookAttempt(outcome) {
      webhookAttempts.inc({ outcome });
    },
    exportRun(outcome) {
      exportRuns.inc({ outcome });
    },
  };
}
