import {
  createPublicClient,
  defineChain,
  encodeAbiParameters,
  http,
  isAddressEqual,
  keccak256,
  pad,
  parseAbiItem,
  parseEventLogs,
  TransactionReceiptNotFoundError,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { sign } from 'viem/accounts';
import type { DevnetManifest } from '../../manifest.ts';
import type { FaultOperation, FaultRegistry } from '../faults.ts';
import { attestationTerms, FINALITY_THRESHOLD_CONFIRMED, FINALITY_THRESHOLD_FINALIZED, type IrisFees } from './fees.ts';
import { decodeBurnMessage, decodeMessage, fillMessage, type MessageV2 } from './messages.ts';
import type { IrisMessage, MessageStore } from './store.ts';

const messageSentEvent = parseAbiItem('event MessageSent(bytes message)');

/**
 * Blocks of the destination chain during which an attested burn can be received (its expirationBlock), by default.
 * The devnet chains only mine on demand, so in practice it never runs out; tests that need it to pass set fewer.
 */
export const EXPIRATION_BLOCKS = 100_000n;

/** A CCTP domain of the devnet: its chain and contracts. */
export interface CctpDomain {
  domain: number;
  chainId: number;
  isHub: boolean;
  messageTransmitter: Address;
  tokenMessenger: Address;
  client: PublicClient;
}

export function connectDomains(manifest: DevnetManifest): Map<number, CctpDomain> {
  if (!manifest.cctp) throw new Error('the devnet manifest has no CCTP deployment (start the chains with cctp: true)');
  const domains = new Map<number, CctpDomain>();
  for (const c of manifest.cctp.chains) {
    const chain = manifest.chains.find((x) => x.chainId === c.chainId);
    if (!chain) throw new Error(`CCTP chain ${c.chainId} is not in the devnet manifest`);
    const viemChain = defineChain({
      id: chain.chainId,
      name: chain.displayName,
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [chain.rpcUrl] } },
    });
    domains.set(c.domain, {
      domain: c.domain,
      chainId: c.chainId,
      isHub: chain.role === 'hub',
      messageTransmitter: c.messageTransmitter,
      tokenMessenger: c.tokenMessenger,
      client: createPublicClient({ chain: viemChain, transport: http(chain.rpcUrl) }),
    });
  }
  return domains;
}

export interface Attester {
  /**
   * The messages a source-chain transaction sent, attested on first sight; null while the transaction is
   * unknown, unmined, reverted or sent no message through the domain's MessageTransmitterV2.
   */
  byTransaction(sourceDomain: number, txHash: Hex): Promise<IrisMessage[] | null>;
  byNonce(sourceDomain: number, nonce: Hex): IrisMessage | undefined;
  /**
   * Circle's re-attestation (POST /v2/reattest/{nonce}): the message of that nonce is signed again with a fresh
   * expirationBlock, and served from then on. False for an unknown nonce or a message that was never attested.
   */
  reattest(nonce: Hex): Promise<boolean>;
}

/**
 * The emulated attestation service. On first sight of a transaction it reads the MessageSent logs from
 * the source chain's receipt, assigns each message its nonce, fee and expiration and signs the final
 * message once; the result is stored, so the same transaction always yields the same message and
 * attestation. Delay faults are taken at that moment; the pending period runs from it.
 */
export function createAttester(deps: {
  domains: Map<number, CctpDomain>;
  attesterPrivateKey: Hex;
  fees: IrisFees;
  pendingMs: number;
  faults: FaultRegistry;
  store: MessageStore;
  /** Default EXPIRATION_BLOCKS. */
  expirationBlocks?: bigint;
  log: (obj: object) => void;
}): Attester {
  const { domains, store, faults, log } = deps;
  const inFlight = new Map<string, Promise<IrisMessage[] | null>>();

  async function observe(source: CctpDomain, txHash: Hex): Promise<IrisMessage[] | null> {
    const receipt = await source.client.getTransactionReceipt({ hash: txHash }).catch((err: unknown) => {
      if (err instanceof TransactionReceiptNotFoundError) return null;
      throw err;
    });
    if (receipt?.status !== 'success') return null;
    const logs = parseEventLogs({
      abi: [messageSentEvent],
      logs: receipt.logs.filter((l) => isAddressEqual(l.address, source.messageTransmitter)),
    });
    if (logs.length === 0) return null;

    const seenAt = Date.now();
    const messages = await Promise.all(logs.map((l) => attest(source, txHash, l.logIndex, l.args.message, seenAt)));
    store.add(messages);
    for (const m of messages) {
      log({ event: 'iris.message_seen', sourceDomain: m.sourceDomain, txHash, nonce: m.nonce, operation: m.operation, attested: m.attested !== null });
    }
    return messages;
  }

  async function attest(source: CctpDomain, txHash: Hex, logIndex: number, emitted: Hex, seenAt: number): Promise<IrisMessage> {
    const header = decodeMessage(emitted);
    const operation = faultOperation(header);
    // Unique per message and stable: the same transaction always gets the same nonce, even without saved state.
    const nonce = keccak256(encodeAbiParameters([{ type: 'uint32' }, { type: 'bytes32' }, { type: 'uint256' }], [source.domain, txHash, BigInt(logIndex)]));
    const delay = faults.take(operation, 'delay');
    const fill = await finalFields(source, header);
    const message = fill && fillMessage(emitted, { nonce, ...fill });
    const attested = message && {
      message,
      attestation: await sign({ hash: keccak256(message), privateKey: deps.attesterPrivateKey, to: 'hex' }),
    };
    return {
      sourceDomain: source.domain,
      txHash,
      logIndex,
      nonce,
      emitted,
      attested,
      readyAt: seenAt + deps.pendingMs + (delay?.delayMs ?? 0),
      operation,
    };
  }

  /** What the service sets in the message; null when a burn's maxFee is below the fee. */
  async function finalFields(source: CctpDomain, header: MessageV2) {
    const burn = isAddressEqualBytes32(header.sender, source.tokenMessenger) ? decodeBurnMessage(header.messageBody) : null;
    if (!burn) {
      const fast = header.minFinalityThreshold <= FINALITY_THRESHOLD_CONFIRMED;
      return { finalityThresholdExecuted: fast ? FINALITY_THRESHOLD_CONFIRMED : FINALITY_THRESHOLD_FINALIZED };
    }
    const terms = attestationTerms({ amount: burn.amount, maxFee: burn.maxFee, minFinalityThreshold: header.minFinalityThreshold }, deps.fees);
    if (!terms) return null;
    const destination = domains.get(header.destinationDomain);
    const expirationBlock = destination ? (await destination.client.getBlockNumber({ cacheTime: 0 })) + (deps.expirationBlocks ?? EXPIRATION_BLOCKS) : 0n;
    return { finalityThresholdExecuted: terms.finalityThresholdExecuted, burn: { feeExecuted: terms.feeExecuted, expirationBlock } };
  }

  /** Attesting a transfer into the hub is the stack's 'bridge-in', one out of the hub its 'bridge-out'. */
  function faultOperation(header: MessageV2): FaultOperation | null {
    if (domains.get(header.destinationDomain)?.isHub) return 'bridge-in';
    if (domains.get(header.sourceDomain)?.isHub) return 'bridge-out';
    return null;
  }

  return {
    async byTransaction(sourceDomain, txHash) {
      const known = store.byTransaction(sourceDomain, txHash);
      if (known) return known;
      const source = domains.get(sourceDomain);
      if (!source) return null;
      const key = `${sourceDomain}:${txHash.toLowerCase()}`;
      let pending = inFlight.get(key);
      if (!pending) {
        pending = observe(source, txHash).finally(() => inFlight.delete(key));
        inFlight.set(key, pending);
      }
      return pending;
    },
    byNonce: (sourceDomain, nonce) => store.byNonce(sourceDomain, nonce),
    async reattest(nonce) {
      const m = [...domains.keys()].map((d) => store.byNonce(d, nonce)).find((x) => x !== undefined);
      const source = m && domains.get(m.sourceDomain);
      if (!m?.attested || !source) return false;
      const fill = await finalFields(source, decodeMessage(m.emitted));
      if (!fill) return false;
      const message = fillMessage(m.emitted, { nonce: m.nonce, ...fill });
      store.update(m, { message, attestation: await sign({ hash: keccak256(message), privateKey: deps.attesterPrivateKey, to: 'hex' }) });
      log({ event: 'iris.reattested', sourceDomain: m.sourceDomain, nonce });
      return true;
    },
  };
}

function isAddressEqualBytes32(word: Hex, address: Address): boolean {
  return word.toLowerCase() === pad(address).toLowerCase();
}
