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

/** Characters encodeURIComponent leaves as they are, plus the path separator: most stored keys. */
const URL_SAFE_KEY = /^[A-Za-z0-9\-_.!~*'()/]*$/;

export const fileUrlResolver =
  (baseUrl: string) =>
  (key: string): string =>
    `${baseUrl}/${URL_SAFE_KEY.test(key) ? key : key.split('/').map(encodeURIComponent).join('/')}`;
