/**
 * What the whole-stack tests check of a refund GET shows (docs/api.md, "Outcomes"): that the chain holds it as told.
 */
import assert from 'node:assert/strict';
import { type Address, erc20Abi, getAddress, type Hex, parseEventLogs } from 'viem';
import type { Refund } from '../../src/client/types.ts';
import type { TestStack } from './testStack.ts';

/**
 * The refund's transaction on the source chain moved exactly `refund.amount` of `refund.token` from `from` to `to`, and
 * its explorer link is the chain's (null where the chain lists no explorer, as the local chains do).
 */
export async function assertRefundOnChain(stack: TestStack, refund: Refund | null, expected: { from: Address; to: Address; token: Address }) {
  assert.ok(refund, 'GET shows the refund');
  assert.equal(refund.status, 'CONFIRMED');
  assert.equal(getAddress(refund.token), getAddress(expected.token));
  const receipt = await stack.chainClient('source').getTransactionReceipt({ hash: refund.txHash as Hex });
  assert.equal(receipt.status, 'success');
  const moved = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs }).filter(
    (log) => getAddress(log.address) === getAddress(expected.token) && getAddress(log.args.from) === getAddress(expected.from),
  );
  assert.deepEqual(
    moved.map((log) => [getAddress(log.args.to), log.args.value.toString()]),
    [[getAddress(expected.to), refund.amount]],
    'the refund transaction moved what GET says',
  );
  const chains = await stack.api<Array<{ chainId: number; explorerUrl: string | null }>>('GET', '/api/bridge/chains');
  const explorer = chains.body.data?.find((c) => c.chainId === refund.chainId)?.explorerUrl ?? null;
  assert.equal(refund.explorerUrl, explorer ? `${explorer}/tx/${refund.txHash}` : null);
}
