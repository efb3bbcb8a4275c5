import { type Context, Hono } from 'hono';
import { z } from 'zod';

/**
 * Injected failures of the local stack's emulators, for tests and demos; one registry is shared by the
 * Relay emulator (bridge-in, bridge-out), the Iris emulator (CCTP attestations: bridge-in, bridge-out),
 * the hub RPC proxy in front of the devnet pool (shield, unshield) and the ASP emulator (asp-review).
 * A Relay order or CCTP burn is 'bridge-in' when it arrives on the hub chain and 'bridge-out' when it
 * starts on the hub.
 *
 * - fail:   bridge: POST /quote/v2 answers HTTP 500; Iris: GET /v2/messages answers HTTP 500;
 *           pool: the hub RPC rejects the shield/unshield transaction
 * - refund: on deposit, the solver pays amountIn back to refundTo instead of filling (Relay only)
 * - delay:  on deposit, the fill waits delayMs; Iris: a newly seen burn stays pending delayMs longer
 * - reject: the ASP declines the next deposits it reviews (asp-review only, its only mode)
 *
 * Each triggered fault consumes one of its `count`; without a count it stays until cleared.
 */

export const faultOperations = ['bridge-in', 'shield', 'unshield', 'bridge-out', 'asp-review'] as const;
export type FaultOperation = (typeof faultOperations)[number];
export type FaultMode = 'fail' | 'refund' | 'delay' | 'reject';

export const faultSpecSchema = z
  .strictObject({
    operation: z.enum(faultOperations),
    mode: z.enum(['fail', 'refund', 'delay', 'reject']),
    count: z.number().int().positive().optional(),
    delayMs: z.number().int().nonnegative().optional(),
  })
  .refine((f) => f.mode !== 'delay' || f.delayMs !== undefined, { message: "delayMs is required for mode 'delay'" })
  .refine((f) => f.mode === 'fail' || (f.operation !== 'shield' && f.operation !== 'unshield'), { message: "shield and unshield take only mode 'fail'" })
  .refine((f) => (f.mode === 'reject') === (f.operation === 'asp-review'), {
    message: "mode 'reject' is for asp-review, and asp-review takes only mode 'reject'",
  });

export type FaultSpec = z.infer<typeof faultSpecSchema>;

export interface FaultController {
  /** Adds a fault, replacing any existing one with the same operation and mode. */
  set(spec: FaultSpec): void;
  /** Clears the faults of one operation, or all. */
  clear(operation?: FaultOperation): void;
  /** Active faults; `count` is what remains. */
  list(): FaultSpec[];
}

export interface FaultRegistry extends FaultController {
  /** The fault for this operation and mode if one is active, consuming one count. */
  take(operation: FaultOperation | null, mode: FaultMode): FaultSpec | null;
}

export function createFaultRegistry(log: (obj: object) => void = () => {}): FaultRegistry {
  let faults: FaultSpec[] = [];

  return {
    set(spec) {
      const valid = faultSpecSchema.parse(spec);
      faults = [...faults.filter((f) => f.operation !== valid.operation || f.mode !== valid.mode), valid];
      log({ event: 'fault.set', ...valid });
    },
    clear(operation) {
      faults = operation ? faults.filter((f) => f.operation !== operation) : [];
      log({ event: 'fault.clear', operation: operation ?? 'all' });
    },
    list() {
      return faults.map((f) => ({ ...f }));
    },
    take(operation, mode) {
      if (!operation) return null;
      const fault = faults.find((f) => f.operation === operation && f.mode === mode);
      if (!fault) return null;
      if (fault.count !== undefined) {
        const remaining = fault.count - 1;
        faults = remaining > 0 ? faults.map((f) => (f === fault ? { ...f, count: remaining } : f)) : faults.filter((f) => f !== fault);
      }
      log({ event: 'fault.triggered', operation, mode });
      return { ...fault };
    },
  };
}

/** The emulators' fault-injection admin routes (`GET`, `POST`, `DELETE /`, `DELETE /:operation`), mounted at /_emulator/faults. */
export function faultRoutes(faults: FaultController): Hono {
  const app = new Hono();
  const listed = (c: Context) => c.json({ faults: faults.list() });
  app.get('/', listed);
  app.post('/', async (c) => {
    const parsed = faultSpecSchema.safeParse(await c.req.json().catch(() => undefined));
    if (!parsed.success) return c.json({ error: parsed.error.issues[0]?.message ?? 'invalid fault' }, 400);
    faults.set(parsed.data);
    return listed(c);
  });
  app.delete('/', (c) => {
    faults.clear();
    return listed(c);
  });
  app.delete('/:operation', (c) => {
    const operation = z.enum(faultOperations).safeParse(c.req.param('operation'));
    if (!operation.success) return c.json({ error: `unknown operation ${c.req.param('operation')}` }, 400);
    faults.clear(operation.data);
    return listed(c);
  });
  return app;
}
