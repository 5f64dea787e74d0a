import type { Db } from 'mongodb';
import type { AppConfig } from './config.ts';
import type { PageQuery } from './shared/keyset.ts';

/**
 * One page of the documents open at `asOf` (their `_id`s in the list's order, and the total when
 * `page.count`) from a kept index, or null when it cannot answer (not built yet).
 */
export type OpenAsOfPageReader = (
  db: Db,
  tenant: string,
  q: { asOf: number; client?: string },
  page: PageQuery,
  maxTimeMS: number,
) => Promise<{ total: number | null; ids: unknown[] } | null>;

/**
 * What domain services need from the outside world, passed explicitly: the
 * database, the few settings that shape answers, and a clock (so tests can
 * pin "now"). Never a Fastify request.
 */
export interface ServiceContext {
  db: Db;
  config: Pick<AppConfig, 'documentBaseUrl' | 'queryTimeoutMs' | 'imports'>;
  now: () => Date;
  /**
   * The financial-docs list's `openAsOf` from the receivables' kept index (lib/analytics, which
   * lib/finance may not import: the composition root passes it); without it the list evaluates the documents.
   */
  openAsOfPage?: OpenAsOfPageReader;
}
