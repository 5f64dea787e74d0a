/**
 * Alerts: per-user alert jobs (Agenda on the service's MongoDB) and the alert
 * records they produce. What the start and worker scripts use:
 *
 *   buildApp({ config, db, plugins: [alertsPlugin({ worker: config.worker })] })   // API + in-process worker
 *   createAlertWorker({ db, ...config.alerts.workerSettings }).start()              // worker alone (scripts/worker.ts)
 */
export { alertsPlugin, type AlertsPluginOptions } from './plugin.ts';
export { createAlertWorker, DEFAULT_ALERT_WORKER_SETTINGS, type AlertWorker, type AlertWorkerOptions, type AlertWorkerSettings } from './worker.ts';
export { scheduleAlerts, type ScheduleAlertsResult } from './schedule-alerts.ts';
export { listAlertJobs } from './list-alert-jobs.ts';
export { cancelAlertJob } from './cancel-alert-job.ts';
export { listAlerts } from './list-alerts.ts';
export { ALERT_RULE_IDS, ALERT_RULE_TITLES, type AlertRuleId } from './rules.ts';
