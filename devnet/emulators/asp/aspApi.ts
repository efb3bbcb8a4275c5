import { Hono } from 'hono';
import { faultRoutes, type FaultRegistry } from '../faults.ts';
import type { AspDeposit, AspStore } from './store.ts';

/**
 * The Hono app speaking the 0xbow ASP's public API for one pool: GET /{chainId}/public/mt-roots, mt-leaves
 * and deposits-by-label, each with the pool's scope (decimal) in X-Pool-Scope; plus the stack's fault
 * injection under /_emulator/faults. Big numbers are decimal strings, as the real API sends them.
 */
export function createAspApp(ctx: { chainId: number; scope: bigint; store: AspStore; faults: FaultRegistry; startedAt: number; log: (obj: object) => void }) {
  const app = new Hono();
  const { store } = ctx;

  app.onError((err, c) => {
    ctx.log({ event: 'http.error', path: c.req.path, error: err instanceof Error ? err.message : String(err) });
    return c.json({ error: 'Internal Server Error' }, 500);
  });
  app.notFound((c) => c.json({ error: 'Not Found' }, 404));

  // The real ASP answers a missing scope with 400 and any scope it has no pool for (hex included) with 404.
  app.use('/:chainId/public/*', async (c, next) => {
    if (c.req.param('chainId') !== String(ctx.chainId)) return c.json({ error: `Chain ${c.req.param('chainId')} is not supported` }, 404);
    const scope = c.req.header('X-Pool-Scope');
    if (scope === undefined || scope.trim() === '') return c.json({ error: 'Pool scope is required in X-Pool-Scope header' }, 400);
    if (!/^[0-9]+$/.test(scope.trim()) || BigInt(scope.trim()) !== ctx.scope) return c.json({ error: 'Pool not found' }, 404);
    await next();
  });

  app.get('/:chainId/public/mt-roots', (c) => {
    const { mtRoot, onchainMtRoot } = store.state;
    return c.json({
      // Before the first approval: the empty tree's root, 0, as the contracts' LeanIMT has it.
      mtRoot: (mtRoot?.root ?? 0n).toString(),
      createdAt: new Date(mtRoot?.createdAt ?? ctx.startedAt).toISOString(),
      onchainMtRoot: onchainMtRoot?.toString() ?? null,
    });
  });

  app.get('/:chainId/public/mt-leaves', (c) =>
    c.json({
      aspLeaves: store.state.aspLeaves.map(String),
      stateTreeLeaves: store.state.stateTreeLeaves.map(String),
    }),
  );

  app.get('/:chainId/public/deposits-by-label', (c) => {
    const header = c.req.header('X-Labels');
    if (header === undefined || header.trim() === '') return c.json({ error: 'Labels are required in X-Labels header' }, 400);
    const labels = header.split(',').map((l) => l.trim());
    const invalid = labels.find((l) => !/^[0-9]+$/.test(l));
    if (invalid !== undefined) return c.json({ error: `Invalid label in X-Labels header: ${invalid.slice(0, 80)}` }, 400);
    const deposits = [...new Set(labels.map(BigInt))].map((label) => store.depositByLabel(label)).filter((d) => d !== undefined);
    return c.json(deposits.map(depositBody));
  });

  // ---- emulator-only ----

  app.route('/_emulator/faults', faultRoutes(ctx.faults));

  return app;
}

function depositBody(d: AspDeposit) {
  return {
    type: 'deposit',
    amount: d.value.toString(),
    address: d.depositor,
    label: d.label.toString(),
    txHash: d.txHash,
    timestamp: d.timestamp,
    precommitmentHash: d.precommitmentHash.toString(),
    reviewStatus: d.reviewStatus,
  };
}
