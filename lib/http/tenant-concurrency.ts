/**
 * Fair reports: at most `perTenant` of a tenant's heavy requests (the tax summary and the
 * audits, `x-rate-limit-budget: reports`) run at once on this instance, and at most `queue`
 * more wait for their turn; beyond that 429 `rate_limited` with retry-after. One tenant's
 * year-long reports (whatever number of keys it uses) then hold at most `perTenant` of the
 * database's threads, and another tenant's lists keep their latency (issue 33: list p95 49 ms
 * → 725–883 ms while one tenant ran reports). A waiting request whose client leaves, or whose
 * deadline answered 503, leaves the queue and never runs.
 */
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler, onResponseAsyncHookHandler } from 'fastify';
import { ApiError } from './api-error.ts';

export interface TenantConcurrencyOptions {
  /** Heavy requests of one tenant running at once (REPORT_MAX_CONCURRENT_PER_TENANT). */
  perTenant: number;
  /** Heavy requests of one tenant waiting for a turn (REPORT_QUEUE_PER_TENANT). */
  queue: number;
}

interface TenantSlots {
  running: number;
  waiting: (() => void)[];
}

const RELEASE = Symbol('releaseHeavySlot');
type WithRelease = FastifyRequest & { [RELEASE]?: () => void };

export function tenantConcurrency(opts: TenantConcurrencyOptions): { acquire: onRequestAsyncHookHandler; release: onResponseAsyncHookHandler } {
  const tenants = new Map<string, TenantSlots>();

  const free = (tenant: string, slots: TenantSlots) => {
    const next = slots.waiting.shift();
    if (next)
      next(); // the slot passes on, still counted
    else if (--slots.running === 0) tenants.delete(tenant);
  };

  async function acquire(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const tenant = request.tenant;
    if (tenant === null) return;
    const slots = tenants.get(tenant) ?? { running: 0, waiting: [] };
    tenants.set(tenant, slots);
    if (slots.running < opts.perTenant) slots.running += 1;
    else {
      if (slots.waiting.length >= opts.queue) {
        reply.header('retry-after', '5');
        throw new ApiError(
          429,
          'Too Many Requests',
          [
            `this tenant has ${slots.running} report${slots.running === 1 ? '' : 's'} running and ${slots.waiting.length} waiting, the most it may (REPORT_MAX_CONCURRENT_PER_TENANT ${opts.perTenant}, REPORT_QUEUE_PER_TENANT ${opts.queue}); retry when one has answered`,
          ],
          { reason: 'rate_limited' },
        );
      }
      // A client gone before it queued (its close already emitted) never gets a turn either.
      const gone = await new Promise<boolean>((resolve) => {
        if (reply.raw.destroyed || request.raw.socket?.destroyed === true) {
          resolve(true);
          return;
        }
        const turn = () => {
          reply.raw.off('close', left);
          resolve(false);
        };
        const left = () => {
          const i = slots.waiting.indexOf(turn);
          if (i >= 0) slots.waiting.splice(i, 1);
          resolve(true);
        };
        slots.waiting.push(turn);
        reply.raw.once('close', left);
      });
      if (gone) {
        // Answered already (the deadline's 503), or the client left: it holds no slot, so it must not run. Returning
        // alone let the route go on to its handler without a turn (a tenant could run any number of reports at once by
        // queueing and leaving); hijacked, the lifecycle stops here.
        if (!reply.sent) {
          request.log.info('the client left while its report waited for a turn');
          reply.hijack();
        }
        return;
      }
    }
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      free(tenant, slots);
    };
    (request as WithRelease)[RELEASE] = release;
    // A response never finished (the client left mid-report) frees the slot too.
    reply.raw.once('close', release);
  }

  async function release(request: FastifyRequest): Promise<void> {
    (request as WithRelease)[RELEASE]?.();
  }

  return { acquire, release };
}
