/**
 * `npm run worker`'s Prometheus endpoint (WORKER_METRICS_PORT; docs/operations.md): `GET /metrics`
 * with the same metrics as the service's own (lib/metrics/prometheus.ts: job queue depths, import,
 * webhook and export outcomes, the database's health) and prom-client's process metrics, on a
 * plain HTTP server of its own (the worker has no Fastify app). METRICS_TOKEN applies as on the
 * service; anything else is 404 / 405 in the error shape.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Db } from 'mongodb';
import promClient, { Registry } from 'prom-client';
import { ApiError, errorBody } from '../http/api-error.ts';
import { databaseReader } from './database-reading.ts';
import { metricsTokenChecker } from './metrics-token.ts';
import { exposition, prometheusMetrics } from './prometheus.ts';
import type { ServiceMetrics } from './service-metrics.ts';

export interface WorkerMetrics {
  /** What the workers count, into the endpoint's registry. */
  metrics: ServiceMetrics;
  /** The port listened on (the one asked, or the free one `0` chose). */
  port: number;
  close(): Promise<void>;
}

export interface WorkerMetricsOptions {
  db: Db;
  host: string;
  port: number;
  token: string | null;
  /** A database ping or queue count waits at most this (READY_TIMEOUT_MS). */
  maxTimeMS: number;
  cacheMs: number;
  warn: (message: string, err: unknown) => void;
}

function sendError(res: http.ServerResponse, err: ApiError, headers: Record<string, string> = {}): void {
  res.writeHead(err.statusCode, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(errorBody(err.statusCode, err.message, err.details, { reason: err.reason })));
}

export async function startWorkerMetrics(opts: WorkerMetricsOptions): Promise<WorkerMetrics> {
  const registry = new Registry();
  promClient.collectDefaultMetrics({ register: registry });
  const metrics = prometheusMetrics(
    registry,
    databaseReader({
      db: opts.db,
      ping: async () => {
        const t0 = performance.now();
        await opts.db.command({ ping: 1 }, { timeoutMS: opts.maxTimeMS });
        return Math.round((performance.now() - t0) * 10) / 10;
      },
      problem: () => null,
      maxTimeMS: opts.maxTimeMS,
      cacheMs: opts.cacheMs,
      warn: (err, job) => opts.warn(`metrics: the depth of ${job} could not be read`, err),
    }),
  );
  const checkToken = opts.token === null ? null : metricsTokenChecker(opts.token);
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      sendError(res, new ApiError(404, 'Not Found', [`${path} is not served here: GET /metrics`]));
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendError(res, new ApiError(405, 'Method Not Allowed', ['/metrics answers GET']), { allow: 'GET, HEAD' });
      return;
    }
    const refused = checkToken?.(req.headers.authorization) ?? null;
    if (refused) {
      sendError(res, refused, { 'www-authenticate': 'Bearer realm="metrics"' });
      return;
    }
    exposition(registry).then(
      (text) => {
        res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (err: unknown) => {
        opts.warn('metrics: a scrape failed', err);
        res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify(errorBody(500, 'Internal Server Error', ['the metrics could not be collected'])));
      },
    );
  });
  // A scrape is small and quick: a slow or idle client holds no socket for long.
  server.requestTimeout = 10_000;
  server.headersTimeout = 5_000;
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    metrics,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
