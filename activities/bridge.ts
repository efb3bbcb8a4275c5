import { ApplicationFailure, heartbeat, sleep } from '@temporalio/activity';
import { and, eq } from 'drizzle-orm';
import { encodeFunctionData, erc20Abi, parseEventLogs, type Address, type Hex, type LocalAccount } from 'viem';
import { tokenBalance } from '../src/chain/erc20.ts';
import { bridgeOrders } from '../src/db/schema.ts';
import { BridgeRouteError, type BridgeQuoteRequest } from '../src/providers/bridge.ts';
import type { BridgeLeg, BridgeOrderRef, RoutePlan } from '../workflows/types.ts';
import type { ActivityDeps } from './deps.ts';
import { ensureGas } from './gas.ts';
import { recordLedger } from './projection.ts';

export interface DeliveryCheck {
  routeId: string;
  leg: BridgeLeg;
  chainId: number;
  token: Address;
  recipient: Address;
  amount: string;
  txHashes: Hex[];
}

export function bridgeActivities(deps: ActivityDeps) {
  /**
   * Opens (once) a deposit-address order for a leg and sends the route's funds to it (once).
   * The order is recorded before any funds move; a retry reuses it and the recorded transfer.
   */
  async function placeAndFund(
    routeId: string,
    leg: BridgeLeg,
    generation: number,
    from: LocalAccount,
    request: Omit<BridgeQuoteRequest, 'useDepositAddress' | 'user' | 'refundTo'>,
    maxAmountIn: bigint,
  ): Promise<BridgeOrderRef> {
    // A refunded order is final; each new generation of a leg is a new order and a new funding transfer.
    const orderKey = generation === 1 ? leg : `${leg}#${generation}`;
    const findOrder = () => deps.db.select().from(bridgeOrders).where(and(eq(bridgeOrders.routeId, routeId), eq(bridgeOrders.leg, orderKey)));
    const [recorded] = await findOrder();
    let order = recorded;
    if (!order) {
      const quote = await deps.bridge
        .quote({ ...request, user: from.address, refundTo: from.address, useDepositAddress: true })
        .catch((error: unknown) => {
          if (error instanceof BridgeRouteError) throw ApplicationFailure.nonRetryable(error.message, 'BridgeRouteRejected');
          throw error;
        });
      if (!quote.requestId || !quote.depositAddress) throw new Error('bridge quote carried no deposit address');
      if (quote.amountIn > maxAmountIn) {
        throw ApplicationFailure.retryable(`bridge-${leg} needs ${quote.amountIn} but the route holds ${maxAmountIn}`, 'BridgeTooExpensive');
      }
      const values = {
        routeId,
        leg: orderKey,
        requestId: quote.requestId,
        depositAddress: quote.depositAddress,
        amountIn: quote.amountIn.toString(),
        amountOut: quote.amountOut.toString(),
      };
      await deps.db.insert(bridgeOrders).values(values).onConflictDoNothing();
      [order] = await findOrder();
      if (!order) throw new Error('bridge order was not recorded');
    }

    const step = `bridge-${orderKey}:deposit`;
    await ensureGas(deps, routeId, step, request.originChainId, from.address);
    const { txHash } = await deps.sender.send({
      routeId,
      step,
      chainId: request.originChainId,
      account: from,
      to: request.originCurrency,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [order.depositAddress as Address, BigInt(order.amountIn)] }),
    });
    await recordLedger(deps, {
      routeId,
      kind: leg === 'in' ? 'bridged_in' : 'bridged_out',
      key: generation === 1 ? undefined : String(generation),
      chainId: request.originChainId,
      token: request.originCurrency,
      amount: order.amountIn,
      txHash,
    });
    return { requestId: order.requestId, amountIn: order.amountIn, amountOut: order.amountOut };
  }

  return {
    /** Bridge in: the deposit, exactly the quoted amount, to the route's hub account as the hub asset. */
    async bridgeIn({ plan, generation }: { plan: RoutePlan; generation: number }): Promise<BridgeOrderRef> {
      const { deposit } = deps.keyring.routeAccounts(plan.accountIndex);
      return placeAndFund(
        plan.routeId,
        'in',
        generation,
        deposit,
        {
          originChainId: plan.sourceChainId,
          destinationChainId: plan.hubChainId,
          originCurrency: plan.sourceToken,
          destinationCurrency: plan.hubToken,
          amount: BigInt(plan.amount),
          tradeType: 'EXACT_INPUT',
          recipient: plan.hubAccount,
        },
        BigInt(plan.amount),
      );
    },

    /** Bridge out: exact output, so the recipient receives exactly quotedOutputAmount; paid from the exit account. */
    async bridgeOut({ plan, generation }: { plan: RoutePlan; generation: number }): Promise<BridgeOrderRef> {
      const { exit } = deps.keyring.routeAccounts(plan.accountIndex);
      const available = await tokenBalance(deps.chains, plan.hubChainId, plan.hubToken, exit.address);
      return placeAndFund(
        plan.routeId,
        'out',
        generation,
        exit,
        {
          originChainId: plan.hubChainId,
          destinationChainId: plan.destChainId,
          originCurrency: plan.hubToken,
          destinationCurrency: plan.destToken,
          amount: BigInt(plan.quotedOutputAmount),
          tradeType: 'EXACT_OUTPUT',
          recipient: plan.recipient,
        },
        available,
      );
    },

    /** Waits for the provider to fill an order; a refund or failure is final for this order. */
    async awaitBridgeFill(input: { routeId: string; leg: BridgeLeg; requestId: string }): Promise<{ txHashes: Hex[] }> {
      for (;;) {
        const status = await deps.bridge.orderStatus(input.requestId);
        if (status.state === 'success') {
          if (status.outTxHashes.length === 0) throw new Error(`bridge order ${input.requestId} succeeded without a fill transaction`);
          return { txHashes: status.outTxHashes };
        }
        if (status.state === 'refunded' || status.state === 'failed') {
          throw ApplicationFailure.nonRetryable(
            `bridge-${input.leg} order ${input.requestId} ended as ${status.providerStatus}${status.details ? `: ${status.details}` : ''}`,
            status.state === 'refunded' ? 'BridgeRefunded' : 'BridgeFailed',
          );
        }
        heartbeat({ providerStatus: status.providerStatus });
        await sleep(deps.pollIntervalMs);
      }
    },

    /** Confirms on chain that a fill paid `recipient` exactly `amount` of `token`, and books it. */
    async confirmDelivery(check: DeliveryCheck): Promise<{ txHash: Hex }> {
      const client = deps.chains.publicClient(check.chainId);
      const expected = BigInt(check.amount);
      for (const hash of check.txHashes) {
        const receipt = await client.getTransactionReceipt({ hash });
        const transfers = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs }).filter(
          (log) => log.address.toLowerCase() === check.token.toLowerCase() && log.args.to.toLowerCase() === check.recipient.toLowerCase(),
        );
        const delivered = transfers.reduce((sum, log) => sum + log.args.value, 0n);
        if (receipt.status === 'success' && delivered >= expected) {
          await recordLedger(deps, {
            routeId: check.routeId,
            kind: check.leg === 'in' ? 'arrived_on_hub' : 'paid',
            chainId: check.chainId,
            token: check.token,
            amount: delivered.toString(),
            txHash: hash,
          });
          return { txHash: hash };
        }
      }
      throw ApplicationFailure.nonRetryable(
        `bridge-${check.leg} fill ${check.txHashes.join(', ')} did not pay ${check.amount} of ${check.token} to ${check.recipient} on chain ${check.chainId}`,
        'DeliveryMismatch',
      );
    },
  };
}
