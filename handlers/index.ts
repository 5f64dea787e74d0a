import type { HandlerDeps, HandlerMap } from './types.ts';
import { healthHandlers } from './health.ts';
import { financialDocsHandlers } from './financial-docs.ts';
import { shipmentsHandlers } from './shipments.ts';
import { alertsHandlers } from './alerts.ts';
import { taxHandlers } from './tax.ts';
import { analyticsHandlers } from './analytics.ts';
import { importsHandlers } from './imports.ts';
import { webhooksHandlers } from './webhooks.ts';
import { receivedHandlers } from './received.ts';
import { originalsHandlers } from './originals.ts';
import { exportsHandlers } from './exports.ts';

/**
 * Every operationId of the spec bound to its handler. The `HandlerMap` type
 * makes a missing or misspelled operation a compile error.
 */
export function createHandlers(deps: HandlerDeps): HandlerMap {
  return {
    ...healthHandlers(deps),
    ...financialDocsHandlers(deps),
    ...shipmentsHandlers(deps),
    ...alertsHandlers(deps),
    ...taxHandlers(deps),
    ...analyticsHandlers(deps),
    ...importsHandlers(deps),
    ...webhooksHandlers(deps),
    ...receivedHandlers(deps),
    ...originalsHandlers(deps),
    ...exportsHandlers(deps),
  };
}

export type { HandlerDeps, HandlerMap } from './types.ts';
