import type { Db } from 'mongodb';
import type { AppConfig } from './config.ts';

/**
 * What domain services need from the outside world, passed explicitly: the
 * database, the few settings that shape answers, and a clock (so tests can
 * pin "now"). Never a Fastify request.
 */
export interface ServiceContext {
  db: Db;
  config: Pick<AppConfig, 'documentBaseUrl' | 'queryTimeoutMs' | 'imports'>;
  now: () => Date;
}
