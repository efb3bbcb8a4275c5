import type { FaultRegistry } from '../faults.ts';
import { firstLine, pollingLoop, type PollingLoop } from '../pollingLoop.ts';
import type { Onchain } from './onchain.ts';
import type { Order, OrderStore } from './orders.ts';

/** Signing failures (e.g. the solver lacks funds) tolerated before an order is marked failed. */
const MAX_PAYOUT_ERRORS = 5;

const IN_FLIGHT = new Set<Order['status']>(['pending', 'delayed', 'submitted']);

export type Watcher = PollingLoop;

/**
 * The emulated solver: one loop that detects deposits to waiting orders' deposit addresses
 * and pays out fills (or refunds). A payout is signed and persisted before it is broadcast,
 * so an order is paid at most once even across restarts: a resumed order re-broadcasts the
 * same signed transaction instead of making a new one.
 */
export function createWatcher(deps: {
  store: OrderStore;
  onchain: Onchain;
  faults: FaultRegistry;
  pollIntervalMs: number;
  log: (obj: object) => void;
}): Watcher {
  const { store, onchain, faults, log } = deps;

  async function detectDeposits(): Promise<void> {
    const waiting = store.list().filter((o) => o.status === 'waiting');
    const balances = await Promise.all(
      waiting.map((o) =>
        onchain.balanceOf(o.originChainId, o.originCurrency, o.depositAddress).catch((err: unknown) => {
          log({ event: 'watcher.balance_error', requestId: o.requestId, error: String(err) });
          return null;
        }),
      ),
    );
    for (const [i, order] of waiting.entries()) {
      const balance = balances[i];
      // Exact-amount orders: a surplus is ignored, the quoted amountOut is what fills.
      if (balance === null || balance === undefined || balance - order.baselineBalance < order.amountIn) continue;
      await onDeposit(order);
    }
  }

  async function onDeposit(order: Order): Promise<void> {
    const inTxHashes = await onchain.transfersTo(order.originChainId, order.originCurrency, order.depositAddress, order.fromBlock).catch(() => []);
    const refund = faults.take(order.operation, 'refund');
    const delay = refund ? null : faults.take(order.operation, 'delay');
    store.update(order.requestId, {
      status: delay ? 'delayed' : 'pending',
      action: refund ? 'refund' : 'fill',
      notBefore: delay ? Date.now() + (delay.delayMs ?? 0) : undefined,
      inTxHashes,
    });
    log({ event: 'order.deposit_detected', requestId: order.requestId, action: refund ? 'refund' : 'fill', inTxHashes });
  }

  async function advance(order: Order): Promise<void> {
    if (order.notBefore !== undefined && Date.now() < order.notBefore) return;
    let current = order;

    if (!current.payout) {
      const refund = current.action === 'refund';
      const chainId = refund ? current.originChainId : current.destinationChainId;
      const token = refund ? current.originCurrency : current.destinationCurrency;
      const to = refund ? current.refundTo : current.recipient;
      const amount = refund ? current.amountIn : current.amountOut;
      try {
        const signed = await onchain.signTransfer(chainId, token, to, amount);
        current = store.update(current.requestId, {
          status: 'pending',
          payout: { chainId, token, to, amount, ...signed },
        });
      } catch (err) {
        const payoutErrors = current.payoutErrors + 1;
        const failed = payoutErrors >= MAX_PAYOUT_ERRORS;
        store.update(current.requestId, {
          payoutErrors,
          ...(failed ? { status: 'failure' as const, details: `solver could not pay out: ${firstLine(err)}` } : {}),
        });
        log({ event: 'order.payout_error', requestId: current.requestId, attempt: payoutErrors, error: firstLine(err) });
        return;
      }
    }

    const payout = current.payout!;
    let receipt = await onchain.receipt(payout.chainId, payout.txHash);
    if (!receipt) {
      // Re-broadcasting the same signed transaction is idempotent; "already known" and the like are fine.
      const broadcastError = await onchain.broadcast(payout.chainId, payout.rawTx).then(
        () => undefined,
        (err: unknown) => firstLine(err),
      );
      receipt = await onchain.receipt(payout.chainId, payout.txHash);
      if (!receipt && broadcastError) {
        log({ event: 'order.broadcast_error', requestId: current.requestId, error: broadcastError });
        // Another transaction took this nonce, so ours can never be mined: sign a new one.
        if (/nonce too low|nonce has already been used/i.test(broadcastError)) {
          store.update(current.requestId, { payout: undefined });
        }
        return;
      }
      if (current.status !== 'submitted') {
        current = store.update(current.requestId, { status: 'submitted', txHashes: [payout.txHash] });
      }
      if (!receipt) return;
    }

    if (receipt.status === 'success') {
      const status = current.action === 'refund' ? 'refund' : 'success';
      store.update(current.requestId, { status, txHashes: [payout.txHash] });
      log({ event: `order.${status}`, requestId: current.requestId, txHash: payout.txHash });
    } else {
      store.update(current.requestId, { status: 'failure', details: 'payout transaction reverted', txHashes: [payout.txHash] });
      log({ event: 'order.failure', requestId: current.requestId, txHash: payout.txHash });
    }
  }

  async function iterate(): Promise<void> {
    await detectDeposits();
    const inFlight = store
      .list()
      .filter((o) => IN_FLIGHT.has(o.status))
      .sort((a, b) => a.createdAt - b.createdAt);
    // Sequential: one solver account, so its nonces must be taken one at a time.
    for (const order of inFlight) {
      await advance(order).catch((err: unknown) => {
        log({ event: 'order.advance_error', requestId: order.requestId, error: firstLine(err) });
      });
    }
  }

  return pollingLoop(iterate, deps.pollIntervalMs, (error) => log({ event: 'watcher.error', error }));
}
