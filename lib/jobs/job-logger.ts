/** Where a job worker logs (a pino logger fits; `silentLogger`, lib/jobs/agenda-worker.ts, drops everything). */
export interface JobLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}
