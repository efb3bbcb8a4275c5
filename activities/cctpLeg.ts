import { Context } from '@temporalio/activity';
import type { Hex } from 'viem';
import type { BurnAndMintBridge } from '../src/providers/cctp/types.ts';
import type { ActivityDeps } from './deps.ts';
import { ensureGas } from './gas.ts';
import { bookLegSend, type LegMover, type LegRequest, orderKey, type PreparedLeg } from './legs.ts';
import { failure } from '../src/failures.ts';
import { orderOf, recordOrder } from '../src/transfers/bridgeOrderStore.ts';

/**
 * Burn-and-mint mode: the leg burns USDC on the origin chain (TokenMessengerV2.depositForBurn), waits for
 * Circle's attestation and mints on the destination (MessageTransmitterV2.receiveMessage), relayed by the
 * gas account. The burn's amount and maxFee are recorded before it is signed, so a retry burns nothing new.
 */
export function cctpLegs(deps: ActivityDeps, cctp: BurnAndMintBridge): LegMover {
  /**
   * Exact output: the smallest burn B with B − maxFee(B) ≥ `output`. Circle may charge anything up to maxFee
   * (the expected fee plus CCTP_FEE_BUFFER_BPS), so sizing by the expected fee alone would underpay the
   * recipient whenever the fee rises inside the buffer. When Circle charges less than maxFee, the difference
   * is minted to the recipient on top of the quote (docs/money.md).
   */
  async function burnAmountFor(request: LegRequest): Promise<{ amount: bigint; maxFee: bigint }> {
    if (request.tradeType === 'EXACT_INPUT') {
      const { maxFee } = await cctp.estimateFee(request.originChainId, request.destinationChainId, request.amount);
      return { amount: request.amount, maxFee };
    }
    // maxFee grows with the amount, so amount = output + maxFee(amount) climbs to the smallest fixed point.
    let amount = request.amount;
    for (;;) {
      const estimate = await cctp.estimateFee(request.originChainId, request.destinationChainId, amount);
      if (amount - estimate.maxFee >= request.amount) return { amount, maxFee: estimate.maxFee };
      amount = request.amount + estimate.maxFee;
      if (amount - request.amount > request.amount) throw new Error('CCTP fee estimate does not converge');
    }
  }

  /** The burn's amount and maxFee, recorded before it is signed; a retry reuses them. The burner itself is paid. */
  async function prepare(request: LegRequest): Promise<PreparedLeg> {
    const { routeId, leg } = request;
    const key = orderKey(leg, request.generation);
    const step = `bridge-${key}`;
    let order = await orderOf(deps.db, routeId, key);
    if (!order) {
      // A BridgeRouteError (no route) fails as BridgeRouteRejected: src/temporal/activityErrors.ts.
      const burn = await burnAmountFor(request);
      if (burn.amount > request.available) {
        throw failure('BridgeTooExpensive', `bridge-${leg} needs a burn of ${burn.amount} but the route holds ${request.available}`);
      }
      await recordOrder(deps.db, routeId, key, {
        requestId: step,
        depositAddress: request.recipient,
        amountIn: burn.amount.toString(),
        amountOut: (burn.amount - burn.maxFee).toString(),
      });
      order = await orderOf(deps.db, routeId, key);
      if (!order) throw new Error('burn was not recorded');
    }
    return { order: { kind: 'cctp', requestId: step, amountIn: order.amountIn, amountOut: order.amountOut }, payTo: request.from.address };
  }

  return {
    prepare,

    async start(request) {
      const { routeId, from } = request;
      const step = `bridge-${orderKey(request.leg, request.generation)}`;
      const { order } = await prepare(request);
      const amount = BigInt(order.amountIn);
      await ensureGas(deps, routeId, step, request.originChainId, from.address, request.gasFunder);
      const { txHash } = await cctp.burn({
        routeId,
        step,
        srcChainId: request.originChainId,
        dstChainId: request.destinationChainId,
        from,
        amount,
        mintRecipient: request.recipient,
        maxFee: amount - BigInt(order.amountOut),
      });
      await bookLegSend(deps, request, order.amountIn, txHash);
      return { kind: 'cctp', requestId: txHash, amountIn: order.amountIn, amountOut: order.amountOut };
    },

    /**
     * Waits for the burn's attestation through the process's shared Iris poller (an Iris outage or rate limit
     * is waited out there), heartbeating its progress, then relays the mint. A retry simply waits again.
     */
    async awaitArrival({ routeId, leg, originChainId, destinationChainId, order }) {
      // Captured here: the poller reports from its own async context, not this activity's.
      const activity = Context.current();
      const waitingFor = `bridge-${leg} attestation`;
      activity.heartbeat({ waitingFor });
      const attested = await cctp.awaitAttestation(originChainId, order.requestId as Hex, {
        signal: activity.cancellationSignal,
        onProgress: (progress) => activity.heartbeat({ waitingFor, ...progress }),
      });
      // A route parked past its message's expirationBlock: Iris signs it again. Each message is relayed by a transaction
      // of its own (the step names its expirationBlock): a recorded one with an expired message could only revert, and
      // the destination's usedNonces keeps any two from minting twice.
      activity.heartbeat({ waitingFor: `bridge-${leg} receivable attestation` });
      const status = await cctp.receivable(originChainId, destinationChainId, order.requestId as Hex, attested, { signal: activity.cancellationSignal });
      const minted = await cctp.mint({
        routeId,
        step: `bridge-${leg}:mint:${order.requestId}:${status.expirationBlock}`,
        dstChainId: destinationChainId,
        message: status.message,
        attestation: status.attestation,
        // After the pool only the pool's relayer acts (its sending accounts, in turn): the gas account stays on the deposit side.
        relayer: leg === 'out' ? deps.relaySenders : deps.gasAccount,
      });
      if (!minted.txHash) {
        throw failure('MintNotFound', `burn ${order.requestId} was minted by another relayer and the mint transaction was not found`);
      }
      return [minted.txHash];
    },
  };
}
