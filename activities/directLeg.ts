import { encodeFunctionData, erc20Abi } from 'viem';
import type { ActivityDeps } from './deps.ts';
import { ensureGas } from './gas.ts';
import { bookLegSend, type LegMover, type LegRequest, orderKey, type PreparedLeg } from './legs.ts';
import { failure } from '../src/failures.ts';

/** A leg whose two ends are the same asset on the same chain (e.g. the hub is the destination): one transfer. */
export function directLegs(deps: ActivityDeps): LegMover {
  /** Nothing to record: the leg is the payment itself, of exactly the amount, to the recipient. */
  async function prepare(request: LegRequest): Promise<PreparedLeg> {
    if (request.originCurrency.toLowerCase() !== request.destinationCurrency.toLowerCase()) {
      throw failure('BridgeRouteRejected', `bridge-${request.leg} swaps assets on one chain, which is not supported`);
    }
    if (request.amount > request.available) {
      throw failure('BridgeTooExpensive', `bridge-${request.leg} needs ${request.amount} but the route holds ${request.available}`);
    }
    const amount = request.amount.toString();
    return { order: { kind: 'direct', requestId: '', amountIn: amount, amountOut: amount }, payTo: request.recipient };
  }

  return {
    prepare,

    async start(request) {
      const step = `bridge-${orderKey(request.leg, request.generation)}:transfer`;
      // A retry after the payment looks at the recorded send first: once it is mined the balance is gone, and
      // the recorded transaction (settled below) is the outcome.
      if (!(await deps.sender.intent(request.routeId, step))) {
        await prepare(request);
        await ensureGas(deps, request.routeId, step, request.originChainId, request.from.address, request.gasFunder);
      }
      const { txHash } = await deps.sender.send({
        routeId: request.routeId,
        step,
        chainId: request.originChainId,
        account: request.from,
        to: request.originCurrency,
        data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [request.recipient, request.amount] }),
      });
      const amount = request.amount.toString();
      await bookLegSend(deps, request, amount, txHash);
      return { kind: 'direct', requestId: txHash, amountIn: amount, amountOut: amount };
    },
    async awaitArrival({ order }) {
      return [order.requestId as `0x${string}`];
    },
  };
}
