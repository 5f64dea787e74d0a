/**
 * The embedded engine's own settings, read and validated by its launcher (scripts/start.ts and
 * the CLI tools through open-database.ts), never by the service: lib/config.ts knows only
 * MONGODB_URI. docs/configuration.md lists them as the launcher's.
 *
 * - EMBEDDED_MONGO_MAX_RESTARTS, EMBEDDED_MONGO_RESTART_WINDOW_MS: the supervision
 *   (supervisor.ts): restarts allowed within a window before the process gives up and exits 1.
 * - EMBEDDED_MONGO_PORT: the port of the engine `npm start` and `npm run worker` start, which a
 *   restart binds again (the driver keeps its address).
 * - EMBEDDED_MONGO_XMX, EMBEDDED_MONGO_JAVA_OPTS, EMBEDDED_MONGO_JAR, EMBEDDED_MONGO_CACHE_MB,
 *   EMBEDDED_MONGO_START_TIMEOUT_MS: the engine JVM, read at each start (launcher.ts).
 *
 * An invalid value is a ConfigError (the service's kind: one line on stderr, exit 1).
 */
import { ConfigError } from '../../lib/config.ts';
import { DEFAULT_MAX_RESTARTS, DEFAULT_RESTART_WINDOW_MS } from './supervisor.ts';

export interface EngineSupervisionSettings {
  /** EMBEDDED_MONGO_MAX_RESTARTS (default 5; 0: never restart the engine). */
  maxRestarts: number;
  /** EMBEDDED_MONGO_RESTART_WINDOW_MS (default 300000). */
  restartWindowMs: number;
  /**
   * EMBEDDED_MONGO_PORT (default 0: a port the system picks, from its ephemeral range). A port
   * outside that range (Linux: net.ipv4.ip_local_port_range) cannot be taken by another program's
   * outgoing connection or `listen(0)` in the half second before a restart binds it again.
   */
  port: number;
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max} (got "${raw}")`);
  }
  return value;
}

/** The supervision settings from the environment; throws ConfigError on an invalid value. */
export function engineSupervisionSettings(env: NodeJS.ProcessEnv = process.env): EngineSupervisionSettings {
  return {
    maxRestarts: int(env, 'EMBEDDED_MONGO_MAX_RESTARTS', DEFAULT_MAX_RESTARTS, 0, 1000),
    restartWindowMs: int(env, 'EMBEDDED_MONGO_RESTART_WINDOW_MS', DEFAULT_RESTART_WINDOW_MS, 1000, 86_400_000),
    port: int(env, 'EMBEDDED_MONGO_PORT', 0, 0, 65535),
  };
}
