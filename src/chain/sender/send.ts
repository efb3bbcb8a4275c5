import type { Db } from '../../db/client.ts';
import { createWalletClient, http, type LocalAccount } from 'viem';
import { offeredFees } from '../fees.ts';
import { type Intent, lockSender, highestPendingNonce, recordIntent } from '../intentStore.ts';
import { pushQueue } from './broadcast.ts';
import { pickAccount, signingAccount } from './pickAccount.ts';
import { publicClient, type SenderContext, usedNonces } from './context.ts';
import { nextNonce } from './decide.ts';
import { settle } from './settle.ts';
import { stepIntent } from './stepIntent.ts';
import type { SendRequest, SentTransaction } from './types.ts';

/** `TxSender.send`: settles the step's recorded intent, or signs and records a new one and then settles it. */
export async function send(ctx: SenderContext, request: SendRequest): Promise<SentTransaction> {
  const existing = await stepIntent(ctx, request.routeId, request.step);
  if (existing) return settle(ctx, existing, signingAccount(request, existing.fromAddress));

  const account = await pickAccount(ctx, request);
  // Crash leftovers of this sender first: a new transaction could not mine before them anyway.
  await pushQueue(ctx, request.chainId, account);
  // Fees and gas are read before the sender's lock (RPC round trips other sends of this sender need not wait for):
  // under it only the nonce is picked, the transaction signed and recorded.
  const unsigned = await prepare(ctx, { ...request, account });
  const signed = await ctx.db.transaction(async (tx) => {
    await lockSender(tx, request.chainId, account.address);
    const again = await stepIntent(ctx, request.routeId, request.step, tx);
    if (again) return again;
    return signNew(ctx, { ...request, account }, unsigned, tx);
  });
  // Broadcast only after the record is committed; a failed broadcast is retried from the record by `settle`.
  return settle(ctx, signed, signingAccount(request, signed.fromAddress));
}

type Unsigned = Parameters<LocalAccount['signTransaction']>[0];

/** The transaction without its nonce: our fees (src/chain/fees.ts), the node's gas estimate and headroom. */
async function prepare(ctx: SenderContext, request: SendRequest & { account: LocalAccount }): Promise<Unsigned> {
  const { account, chainId } = request;
  const client = publicClient(ctx, chainId);
  const chain = ctx.clients.chain(chainId);
  const wallet = createWalletClient({ account, chain, transport: http(client.transport.url) });
  const fees = await offeredFees(client, chain);
  const prepared = await wallet.prepareTransactionRequest({
    account,
    chain,
    to: request.to,
    data: request.data,
    value: request.value,
    parameters: ['chainId', 'fees', 'gas', 'type'],
    ...(fees.type === 'eip1559' ? { maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas } : { gasPrice: fees.gasPrice }),
  });
  // viem asks the node to fill the transaction (eth_fillTransaction) and lets the node's fees win over the ones given:
  // ours are set again, so the transaction offers what its top-up and its quote were sized by (src/chain/fees.ts).
  if (fees.type === 'eip1559')
    Object.assign(prepared, { maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas, gasPrice: undefined });
  else Object.assign(prepared, { gasPrice: fees.gasPrice, maxFeePerGas: undefined, maxPriorityFeePerGas: undefined });
  if (request.gasHeadroomPercent) prepared.gas = (prepared.gas * BigInt(100 + request.gasHeadroomPercent)) / 100n;
  return prepared as Unsigned;
}

/** Signs and records `unsigned` at the sender's next nonce: after what the node has and after our queued intents. */
async function signNew(ctx: SenderContext, request: SendRequest & { account: LocalAccount }, unsigned: Unsigned, tx: Db): Promise<Intent> {
  const { account, chainId } = request;
  const pending = await usedNonces(ctx, { chainId, fromAddress: account.address }, 'pending');
  const nonce = nextNonce(pending, await highestPendingNonce(tx, { chainId, fromAddress: account.address }, pending));
  const rawTx = await account.signTransaction({ ...unsigned, nonce } as Unsigned);
  return recordIntent(tx, { routeId: request.routeId, step: request.step, chainId, fromAddress: account.address, nonce, rawTx });
}
