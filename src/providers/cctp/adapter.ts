import { encodeFunctionData, erc20Abi, isAddressEqual, parseEventLogs, type Hex } from 'viem';
import type { ChainClients } from '../../chain/clients.ts';
import type { TxSender } from '../../chain/txSender.ts';
import { BridgeRouteError } from '../bridge.ts';
import { createTtlCache } from '../ttlCache.ts';
import { messageTransmitterV2Abi, tokenMessengerV2Abi } from './abi.ts';
import { createAttestationPoller, type AttestationPoller } from './attestationPoller.ts';
import { validateCctpChains, type CctpChainConfig } from './chains.ts';
import { DEFAULT_FEE_BUFFER_BPS, FINALITY_THRESHOLD, feeForAmount, maxFeeFor } from './fees.ts';
import type { IrisClient, IrisFees } from './iris.ts';
import { addressToBytes32, parseBurnMessageBody, parseMessageHeader } from './message.ts';
import type { AttestedMessage, BurnAndMintBridge, CctpFinality, MintResult } from './types.ts';
import { PrivateRouteError } from '../../errors.ts';

export interface CctpBridgeOptions {
  iris: IrisClient;
  chains: CctpChainConfig[];
  clients: ChainClients;
  sender: TxSender;
  finality: CctpFinality;
  /** maxFee buffer in basis points of the fee. Default 2000 (+20 %), see fees.ts. */
  feeBufferBps?: number;
  /**
   * How many blocks back mint() searches for someone else's MessageReceived when a message's nonce
   * is already used. Default 10 000; public RPCs cap getLogs ranges, so keep it modest.
   */
  mintLookbackBlocks?: bigint;
  /** The process's attestation poller (close it on shutdown); default: one of this bridge's own, with default limits. */
  attestations?: AttestationPoller;
  /** How long Iris' fees of a (source, destination) pair are reused. Default 30 s; 0 = ask Iris every time. */
  feeCacheMs?: number;
}

export const DEFAULT_FEE_CACHE_MS = 30_000;

/** The (routeId, step) key already holds a burn that differs from the request: never re-burn, needs an operator. */
export class CctpBurnMismatchError extends PrivateRouteError {
  override name = 'CctpBurnMismatchError';
}

/** bytes32(0): any address may relay receiveMessage, so a stuck relayer never strands the funds. */
const ANY_CALLER: Hex = `0x${'00'.repeat(32)}`;
const ZERO_NONCE: Hex = ANY_CALLER;

export const approveStep = (step: string) => `${step}:approve`;
export const burnStep = (step: string) => `${step}:burn`;

/** A message whose expirationBlock is this close to the destination's head is re-attested before it is relayed. */
const EXPIRY_MARGIN_BLOCKS = 20n;
const REATTEST_POLL_MS = 2_000;

/** A burn message's expirationBlock (0: none, or not a burn). */
function expirationOf(message: Hex): bigint {
  try {
    return parseBurnMessageBody(parseMessageHeader(message).body).expirationBlock;
  } catch {
    return 0n;
  }
}

export function createCctpBridge(opts: CctpBridgeOptions): BurnAndMintBridge {
  const chains = validateCctpChains(opts.chains);
  const byId = new Map(chains.map((c) => [c.chainId, c]));
  const bufferBps = opts.feeBufferBps ?? DEFAULT_FEE_BUFFER_BPS;
  const lookback = opts.mintLookbackBlocks ?? 10_000n;
  const threshold = FINALITY_THRESHOLD[opts.finality];
  maxFeeFor(0n, opts.finality, bufferBps); // validates the buffer at construction
  // Circle changes a route's fee rarely, and the burn's maxFee carries a buffer above the estimate.
  const fees = createTtlCache<IrisFees>({ ttlMs: opts.feeCacheMs ?? DEFAULT_FEE_CACHE_MS });
  const attestations = opts.attestations ?? createAttestationPoller({ iris: opts.iris });

  function chain(chainId: number): CctpChainConfig {
    const found = byId.get(chainId);
    if (!found) throw new BridgeRouteError(`no route: chain ${chainId} is not a configured CCTP chain`);
    return found;
  }

  function route(srcChainId: number, dstChainId: number) {
    if (srcChainId === dstChainId) throw new BridgeRouteError('no route: source and destination chain are the same');
    return { src: chain(srcChainId), dst: chain(dstChainId) };
  }

  async function findMint(dst: CctpChainConfig, nonce: Hex): Promise<Hex | null> {
    const client = opts.clients.publicClient(dst.chainId);
    try {
      const latest = await client.getBlockNumber();
      const events = await client.getContractEvents({
        address: dst.messageTransmitter,
        abi: messageTransmitterV2Abi,
        eventName: 'MessageReceived',
        args: { nonce },
        fromBlock: latest > lookback ? latest - lookback : 0n,
        toBlock: latest,
      });
      return events[0]?.transactionHash ?? null;
    } catch {
      // Only informational: the mint is proven by usedNonces, the hash is a convenience.
      return null;
    }
  }

  return {
    chains: () => chains.map((c) => ({ ...c })),

    async estimateFee(srcChainId, dstChainId, amount) {
      if (amount <= 0n) throw new BridgeRouteError('no route: amount must be greater than zero');
      const { src, dst } = route(srcChainId, dstChainId);
      const tier = (await fees.get(`${src.domain}:${dst.domain}`, () => opts.iris.getFees(src.domain, dst.domain)))[opts.finality];
      if (!tier) throw new BridgeRouteError(`no route: Circle publishes no ${opts.finality} fee for ${src.name} → ${dst.name}`);
      const fee = feeForAmount(amount, tier.minimumFeeBps);
      const maxFee = maxFeeFor(fee, opts.finality, bufferBps);
      // TokenMessengerV2 reverts unless maxFee < amount.
      if (maxFee >= amount) throw new BridgeRouteError(`no route: ${amount} is too small to cover the CCTP fee (max ${maxFee})`);
      return { fee, maxFee, finalityThreshold: threshold, minimumFeeBps: tier.minimumFeeBps };
    },

    async burn(input) {
      const { src, dst } = route(input.srcChainId, input.dstChainId);
      if (input.amount <= 0n) throw new BridgeRouteError('no route: amount must be greater than zero');
      if (input.maxFee < 0n || input.maxFee >= input.amount) throw new BridgeRouteError('no route: maxFee must be at least 0 and below the amount');
      const mintRecipient = addressToBytes32(input.mintRecipient);
      const base = { routeId: input.routeId, chainId: src.chainId, account: input.from };

      // Exactly the amount, never an open allowance. On a retry both sends return the recorded transactions.
      await opts.sender.send({
        ...base,
        step: approveStep(input.step),
        to: src.usdc,
        data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [src.tokenMessenger, input.amount] }),
      });
      const { txHash, receipt } = await opts.sender.send({
        ...base,
        step: burnStep(input.step),
        to: src.tokenMessenger,
        data: encodeFunctionData({
          abi: tokenMessengerV2Abi,
          functionName: 'depositForBurn',
          args: [input.amount, dst.domain, mintRecipient, src.usdc, ANY_CALLER, input.maxFee, threshold],
        }),
      });

      // A recorded burn is returned as is, so make sure it is the burn this call describes.
      const burns = parseEventLogs({ abi: tokenMessengerV2Abi, eventName: 'DepositForBurn', logs: receipt.logs }).filter((log) =>
        isAddressEqual(log.address, src.tokenMessenger),
      );
      const matches = burns.some(
        ({ args }) =>
          isAddressEqual(args.burnToken, src.usdc) &&
          args.amount === input.amount &&
          args.destinationDomain === dst.domain &&
          args.mintRecipient.toLowerCase() === mintRecipient &&
          args.maxFee === input.maxFee,
      );
      if (!matches) {
        throw new CctpBurnMismatchError(
          `burn ${txHash} recorded for ${input.routeId}/${burnStep(input.step)} does not burn ${input.amount} to domain ${dst.domain} for ${input.mintRecipient} with maxFee ${input.maxFee}`,
        );
      }
      return { txHash };
    },

    existingBurn: (routeId, step) => opts.sender.intent(routeId, burnStep(step)),

    attestation: (srcChainId, burnTxHash) => opts.iris.getMessages(chain(srcChainId).domain, burnTxHash),

    awaitAttestation: async (srcChainId, burnTxHash, waitOpts) => attestations.awaitAttestation(chain(srcChainId).domain, burnTxHash, waitOpts),

    async receivable(srcChainId, dstChainId, burnTxHash, attested, waitOpts) {
      const expirationBlock = expirationOf(attested.message);
      if (expirationBlock === 0n) return { ...attested, renewed: false, expirationBlock };
      const head = await opts.clients.publicClient(chain(dstChainId).chainId).getBlockNumber({ cacheTime: 0 });
      if (expirationBlock > head + EXPIRY_MARGIN_BLOCKS) return { ...attested, renewed: false, expirationBlock };
      await opts.iris.reattest(parseMessageHeader(attested.message).nonce);
      for (;;) {
        waitOpts?.signal?.throwIfAborted();
        const status = await opts.iris.getMessages(chain(srcChainId).domain, burnTxHash);
        if (status.state === 'complete' && status.message && status.attestation) {
          const renewed = expirationOf(status.message);
          if (renewed > head + EXPIRY_MARGIN_BLOCKS) return { ...(status as AttestedMessage), renewed: true, expirationBlock: renewed };
        }
        await new Promise((resolve) => setTimeout(resolve, REATTEST_POLL_MS));
      }
    },

    async mint(input): Promise<MintResult> {
      const dst = chain(input.dstChainId);
      const header = parseMessageHeader(input.message);
      if (header.destinationDomain !== dst.domain) {
        throw new Error(`message is for domain ${header.destinationDomain}, not ${dst.name} (domain ${dst.domain})`);
      }
      if (header.nonce === ZERO_NONCE) {
        throw new Error('message has no nonce: pass the attested message from Iris, not the MessageSent log of the burn');
      }
      const client = opts.clients.publicClient(dst.chainId);
      const nonceUsed = async () =>
        (await client.readContract({
          address: dst.messageTransmitter,
          abi: messageTransmitterV2Abi,
          functionName: 'usedNonces',
          args: [header.nonce],
        })) !== 0n;
      const minted = async (): Promise<MintResult> => ({ txHash: await findMint(dst, header.nonce), alreadyMinted: true });

      // With a recorded transaction the sender settles it (our own mint); without one, a used nonce
      // means someone else relayed the message and sending would only revert.
      if (!(await opts.sender.intent(input.routeId, input.step)) && (await nonceUsed())) return minted();
      try {
        const sent = await opts.sender.send({
          routeId: input.routeId,
          step: input.step,
          chainId: dst.chainId,
          account: input.relayer,
          to: dst.messageTransmitter,
          data: encodeFunctionData({
            abi: messageTransmitterV2Abi,
            functionName: 'receiveMessage',
            args: [input.message, input.attestation],
          }),
        });
        return { txHash: sent.txHash, alreadyMinted: false };
      } catch (error) {
        // Lost a race with another relayer: our transaction reverted (or failed gas estimation) on "Nonce already used".
        if (await nonceUsed().catch(() => false)) return minted();
        throw error;
      }
    },
  };
}
