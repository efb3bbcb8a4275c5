import { heartbeat, sleep } from '@temporalio/activity';
import { erc20Abi, isAddressEqual, parseEventLogs, type Address, type TransactionReceipt } from 'viem';
import { isNativeToken, paymentCall } from '../src/chain/erc20.ts';
import type { bridgeOrders } from '../src/db/schema.ts';
import type { DepositAddressBridge } from '../src/providers/bridge.ts';
import type { BridgeOrderRef } from '../src/domain/plan.ts';
import type { ActivityDeps } from './deps.ts';
import { ensureGas } from './gas.ts';
import { nativeUserBalance } from './nativeFunds.ts';
import { bookLegSend, type LegMover, type LegRequest, orderKey, pollProvider, type PreparedLeg } from './legs.ts';
import { failure } from '../src/failures.ts';
import { orderOf, recordOrder, replaceOrder, setAsideOrders } from '../src/transfers/bridgeOrderStore.ts';

type OrderRow = typeof bridgeOrders.$inferSelect;

/** The status poll backs off to at most this many poll intervals (15 s in production). */
const STATUS_POLL_BACKOFF_CAP = 15;

const refOf = (order: OrderRow): BridgeOrderRef => ({ kind: 'relay', requestId: order.requestId, amountIn: order.amountIn, amountOut: order.amountOut });

/** Deposit-address mode: a Relay order per leg, funded by sending to its deposit address. */
export function relayLegs(deps: ActivityDeps, relay: DepositAddressBridge): LegMover {
  const fundingStep = (request: LegRequest) => `bridge-${orderKey(request.leg, request.generation)}:deposit`;

  /** Whether the send that funds the leg's order was ever signed: the leg's own send, or the one that funds it for the leg. */
  async function fundingSigned(request: LegRequest): Promise<boolean> {
    for (const step of [fundingStep(request), ...(request.fundedBy ? [request.fundedBy] : [])]) {
      if (await deps.sender.intent(request.routeId, step)) return true;
    }
    return false;
  }

  /**
   * The leg's order, recorded before any funds move. Relay's quotes expire in about a minute, so a recorded
   * order is reused only once its funding is signed (a retry then settles that very send); an order never
   * funded (a restart between recording and funding) is set aside under `<leg>~<requestId>` and replaced by a
   * fresh one, priced for what the route holds now.
   */
  async function prepare(request: LegRequest): Promise<PreparedLeg> {
    const { routeId, leg, from } = request;
    const key = orderKey(leg, request.generation);
    const recorded = await orderOf(deps.db, routeId, key);
    if (recorded && (await fundingSigned(request))) return { order: refOf(recorded), payTo: recorded.depositAddress as Address };

    if (request.amount <= 0n) {
      throw failure('BridgeTooExpensive', `bridge-${leg} has nothing to send: the route holds ${request.available}`);
    }
    // A BridgeRouteError (no route) fails as BridgeRouteRejected: src/temporal/activityErrors.ts.
    const quote = await relay.quote({
      originChainId: request.originChainId,
      destinationChainId: request.destinationChainId,
      originCurrency: request.originCurrency,
      destinationCurrency: request.destinationCurrency,
      amount: request.amount,
      tradeType: request.tradeType,
      recipient: request.recipient,
      user: from.address,
      refundTo: from.address,
      useDepositAddress: true,
    });
    if (!quote.requestId || !quote.depositAddress) throw new Error('bridge quote carried no deposit address');
    if (quote.amountIn > request.available) {
      throw failure('BridgeTooExpensive', `bridge-${leg} needs ${quote.amountIn} but the route holds ${request.available}`);
    }
    // The order delivers at least its minimum (the quote less Relay's slippage tolerance): what arrival is held to.
    const order = {
      requestId: quote.requestId,
      depositAddress: quote.depositAddress,
      amountIn: quote.amountIn.toString(),
      amountOut: (quote.minAmountOut ?? quote.amountOut).toString(),
    };
    // A recorded order is replaced but kept findable: a concurrent attempt that read it may still fund it.
    if (recorded) await replaceOrder(deps.db, recorded, order);
    else await recordOrder(deps.db, routeId, key, order);
    // A concurrent attempt may have recorded or replaced it first: the recorded one is the order.
    const current = await orderOf(deps.db, routeId, key);
    if (!current) throw new Error('bridge order was not recorded');
    return { order: refOf(current), payTo: current.depositAddress as Address };
  }

  /**
   * The order a mined funding transfer paid: normally the prepared one; an order set aside while a concurrent
   * attempt funded it is found by its deposit address.
   */
  async function orderFunded(request: LegRequest, prepared: PreparedLeg, receipt: TransactionReceipt): Promise<BridgeOrderRef> {
    const paidTo = fundingPayee(request, receipt);
    if (!paidTo || isAddressEqual(paidTo, prepared.payTo)) return prepared.order;
    const key = orderKey(request.leg, request.generation);
    const orders = await setAsideOrders(deps.db, request.routeId, key);
    const funded = orders.find((o) => isAddressEqual(o.depositAddress as Address, paidTo));
    if (!funded)
      throw failure(
        'BridgeFundingMismatch',
        `bridge-${key}: the recorded funding transfer paid no recorded order of the route; look at its tx_intents and bridge_orders`,
      );
    return refOf(funded);
  }

  return {
    prepare,

    async start(request) {
      const prepared = await prepare(request);
      const step = fundingStep(request);
      const amountIn = BigInt(prepared.order.amountIn);
      const call = paymentCall(request.originCurrency, prepared.payTo, amountIn);
      // A recorded funding send had its gas: a retry resends that transaction, and must not top the account up again.
      if (!(await deps.sender.intent(request.routeId, step))) {
        // A native route's ETH is the user's (all of it: a surplus too, refunded later), not gas: the top-up covers
        // the fee beside it, so the bridge-in's fee never comes out of the user's funds.
        const usersEth = isNativeToken(request.originCurrency)
          ? await nativeUserBalance(deps, { routeId: request.routeId, sourceChainId: request.originChainId, depositAddress: request.from.address })
          : 0n;
        await ensureGas(deps, request.routeId, step, request.originChainId, request.from.address, request.gasFunder, usersEth);
      }
      const { txHash, receipt } = await deps.sender.send({ routeId: request.routeId, step, chainId: request.originChainId, account: request.from, ...call });
      const order = await orderFunded(request, prepared, receipt);
      await bookLegSend(deps, request, order.amountIn, txHash);
      return order;
    },

    /**
     * Polls the order until filled; a refund or failure is final for this order. A Relay outage is waited out here.
     * Most fills land within seconds, so the first looks are quick and later ones back off (×1.5 up to 15 poll
     * intervals): a slow order costs a few calls a minute of the status quota every replica shares, not one a second.
     */
    async awaitArrival({ leg, order }) {
      let intervalMs = deps.pollIntervalMs;
      for (;;) {
        const status = await pollProvider(`bridge-${leg} order status`, () => relay.orderStatus(order.requestId), deps.pollIntervalMs);
        if (status.state === 'success') {
          if (status.outTxHashes.length === 0) throw new Error(`bridge order ${order.requestId} succeeded without a fill transaction`);
          return status.outTxHashes;
        }
        if (status.state === 'refunded' || status.state === 'failed') {
          throw failure(
            status.state === 'refunded' ? 'BridgeRefunded' : 'BridgeFailed',
            `bridge-${leg} order ${order.requestId} ended as ${status.providerStatus}${status.details ? `: ${status.details}` : ''}`,
          );
        }
        heartbeat({ providerStatus: status.providerStatus });
        await sleep(intervalMs);
        intervalMs = Math.min(Math.round(intervalMs * 1.5), deps.pollIntervalMs * STATUS_POLL_BACKOFF_CAP);
      }
    },
  };
}

/** Whom a mined funding transaction paid: the receiver of the native value, or of the leg's token's Transfer from `from`. */
function fundingPayee(request: LegRequest, receipt: TransactionReceipt): Address | undefined {
  if (isNativeToken(request.originCurrency)) return receipt.to ?? undefined;
  const [paid] = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs }).filter(
    (log) => isAddressEqual(log.address, request.originCurrency) && isAddressEqual(log.args.from, request.from.address),
  );
  return paid?.args.to;
}
