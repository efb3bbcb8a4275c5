import { ApplicationFailure, heartbeat, sleep } from '@temporalio/activity';
import { and, eq } from 'drizzle-orm';
import { encodeFunctionData, erc20Abi, type Address } from 'viem';
import { bridgeOrders } from '../src/db/schema.ts';
import { BridgeRouteError, type DepositAddressBridge } from '../src/providers/bridge.ts';
import type { ActivityDeps } from './deps.ts';
import { ensureGas } from './gas.ts';
import { bookLegSend, type LegMover, type LegRequest, orderKey, type PreparedLeg } from './legs.ts';

/** Deposit-address mode: a Relay order per leg, funded by sending to its deposit address. */
export function relayLegs(deps: ActivityDeps, relay: DepositAddressBridge): LegMover {
  /** The leg's order, quoted and recorded once before any funds move; a retry reuses it. */
  async function prepare(request: LegRequest): Promise<PreparedLeg> {
    const { routeId, leg, from } = request;
    // The order is recorded before any funds move; a retry reuses it and the recorded transfer.
    const key = orderKey(leg, request.generation);
    const findOrder = () => deps.db.select().from(bridgeOrders).where(and(eq(bridgeOrders.routeId, routeId), eq(bridgeOrders.leg, key)));
    let [order] = await findOrder();
    if (!order) {
      const quote = await relay
        .quote({
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
        })
        .catch((error: unknown) => {
          if (error instanceof BridgeRouteError) throw ApplicationFailure.nonRetryable(error.message, 'BridgeRouteRejected');
          throw error;
        });
      if (!quote.requestId || !quote.depositAddress) throw new Error('bridge quote carried no deposit address');
      if (quote.amountIn > request.available) {
        throw ApplicationFailure.retryable(`bridge-${leg} needs ${quote.amountIn} but the route holds ${request.available}`, 'BridgeTooExpensive');
      }
      await deps.db
        .insert(bridgeOrders)
        .values({ routeId, leg: key, requestId: quote.requestId, depositAddress: quote.depositAddress, amountIn: quote.amountIn.toString(), amountOut: quote.amountOut.toString() })
        .onConflictDoNothing();
      [order] = await findOrder();
      if (!order) throw new Error('bridge order was not recorded');
    }
    return {
      order: { kind: 'relay', requestId: order.requestId, amountIn: order.amountIn, amountOut: order.amountOut },
      payTo: order.depositAddress as Address,
    };
  }

  return {
    prepare,

    async start(request) {
      const { order, payTo } = await prepare(request);
      const step = `bridge-${orderKey(request.leg, request.generation)}:deposit`;
      await ensureGas(deps, request.routeId, step, request.originChainId, request.from.address, request.gasFunder);
      const { txHash } = await deps.sender.send({
        routeId: request.routeId,
        step,
        chainId: request.originChainId,
        account: request.from,
        to: request.originCurrency,
        data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [payTo, BigInt(order.amountIn)] }),
      });
      await bookLegSend(deps, request, order.amountIn, txHash);
      return order;
    },

    /** Polls the order until filled; a refund or failure is final for this order. */
    async awaitArrival({ leg, order }) {
      for (;;) {
        const status = await relay.orderStatus(order.requestId);
        if (status.state === 'success') {
          if (status.outTxHashes.length === 0) throw new Error(`bridge order ${order.requestId} succeeded without a fill transaction`);
          return status.outTxHashes;
        }
        if (status.state === 'refunded' || status.state === 'failed') {
          throw ApplicationFailure.nonRetryable(
            `bridge-${leg} order ${order.requestId} ended as ${status.providerStatus}${status.details ? `: ${status.details}` : ''}`,
            status.state === 'refunded' ? 'BridgeRefunded' : 'BridgeFailed',
          );
        }
        heartbeat({ providerStatus: status.providerStatus });
        await sleep(deps.pollIntervalMs);
      }
    },
  };
}
