/**
 * What the service counts besides HTTP requests, as the areas report it: MCP tool calls, imported
 * files, webhook delivery attempts, export runs. The areas see this interface only; lib/app/metrics.ts backs it
 * with Prometheus metrics, or with NO_METRICS when METRICS_ENABLED is off. Every label value comes
 * from a closed set (tool names of the catalogue, file kinds and statuses, attempt and run outcomes), so
 * the number of series stays bounded whatever the clients send.
 */

/** How an MCP tool call ended: `ok`, or `error` (the tool result flags an error: the operation answered 4xx/5xx, or the call failed). */
export type ToolCallOutcome = 'ok' | 'error';

/** What one webhook delivery attempt led to: delivered, to be retried, or given up for good. */
export type WebhookAttemptOutcome = 'succeeded' | 'retrying' | 'failed';

/** How one run of an export's job ended: the file is ready, the export failed for good, or the run threw and is tried again. */
export type ExportRunOutcome = 'ready' | 'failed' | 'retrying';

export interface ServiceMetrics {
  /** An MCP tool call of a tool of the catalogue ended after `seconds`. */
  toolCall(tool: string, outcome: ToolCallOutcome, seconds: number): void;
  /** An imported file's result: its kind (`unknown` when rejected before it was recognised) and status (created, updated, skipped, rejected). */
  importedFile(kind: string, status: string): void;
  /** A webhook delivery attempt ended. */
  webhookAttempt(outcome: WebhookAttemptOutcome): void;
  /** A run of an export's job ended. */
  exportRun(outcome: ExportRunOutcome): void;
}

/** Counts nothing (METRICS_ENABLED off, and the worker process, which serves no /metrics). */
export const NO_METRICS: ServiceMetrics = {
  toolCall() {},
  importedFile() {},
  webhookAttempt() {},
  exportRun() {},
};
