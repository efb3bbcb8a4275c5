/**
 * The attacker: pure functions from public chain data (observe.ts) to guesses. Nothing here knows which
 * route a transaction belongs to; scoring against the truth is score.ts's business.
 *
 * What it CAN see: every transaction (sender, target, calldata, native value), every log, block times and
 * contract code on the source, hub and destination chains; the public contract addresses (tokens, the
 * Privacy Pools Entrypoint and pool, CCTP's contracts); the service's public quote endpoint (now, and sampled
 * while transfers were made); Relay's public request history; the ASP's public list of approved labels.
 * What it CANNOT see: Postgres, Temporal, the service's logs or keys, the Relay and ASP operators' own
 * records, and any GET /api/private-route/:id of a route it did not create (it may create routes of its own:
 * then it knows both ends of those).
 * Identifiers are high-entropy values only (≥ 2^64: addresses, hashes, field elements); amounts, counts and
 * offsets are left to the amount attacker.
 */
import { LeanIMT } from '@zk-kit/lean-imt';
import { poseidon2 } from 'poseidon-lite';
import { decodeEventLog, decodeFunctionData, parseAbi, toEventSelector } from 'viem';
import type { ChainData, ChainLog, QuoteAnswer, QuoteSample, RelayRequest } from './observe.ts';

const TOPIC = {
  transfer: toEventSelector('Transfer(address,address,uint256)'),
  entrypointDeposited: toEventSelector('Deposited(address,address,uint256,uint256)'),
  poolDeposited: toEventSelector('Deposited(address,uint256,uint256,uint256,uint256)'),
  withdrawalRelayed: toEventSelector('WithdrawalRelayed(address,address,address,uint256,uint256)'),
  withdrawn: toEventSelector('Withdrawn(address,uint256,uint256,uint256)'),
  leafInserted: toEventSelector('LeafInserted(uint256,uint256,uint256)'),
  rootUpdated: toEventSelector('RootUpdated(uint256,string,uint256)'),
  ragequit: toEventSelector('Ragequit(address,uint256,uint256,uint256)'),
  depositForBurn: toEventSelector('DepositForBurn(address,uint256,address,bytes32,uint32,bytes32,bytes32,uint256,uint32,bytes)'),
  messageReceived: toEventSelector('MessageReceived(address,uint32,bytes32,bytes32,uint32,bytes)'),
};
const EVENT_NAMES = new Map<string, string>([
  [TOPIC.transfer, 'Transfer'],
  [TOPIC.entrypointDeposited, 'Entrypoint.Deposited'],
  [TOPIC.poolDeposited, 'Pool.Deposited'],
  [TOPIC.withdrawalRelayed, 'WithdrawalRelayed'],
  [TOPIC.withdrawn, 'Pool.Withdrawn'],
  [TOPIC.leafInserted, 'LeafInserted'],
  [TOPIC.rootUpdated, 'RootUpdated'],
  [TOPIC.ragequit, 'Pool.Ragequit'],
  [TOPIC.depositForBurn, 'DepositForBurn'],
  [TOPIC.messageReceived, 'MessageReceived'],
]);

/** CCTP v2's public events (TokenMessengerV2, MessageTransmitterV2). */
const cctpAbi = parseAbi([
  'event DepositForBurn(address indexed burnToken, uint256 amount, address indexed depositor, bytes32 mintRecipient, uint32 destinationDomain, bytes32 destinationTokenMessenger, bytes32 destinationCaller, uint256 maxFee, uint32 indexed minFinalityThreshold, bytes hookData)',
  'event MessageReceived(address indexed caller, uint32 sourceDomain, bytes32 indexed nonce, bytes32 sender, uint32 indexed finalityThresholdExecuted, bytes messageBody)',
]);

/** The Entrypoint's public relay() signature (Privacy Pools), to read a withdrawal proof's public signals. */
const relayAbi = parseAbi([
  'function relay((address processooor, bytes data) _withdrawal, (uint256[2] pA, uint256[2][2] pB, uint256[2] pC, uint256[8] pubSignals) _proof, uint256 _scope)',
]);

const ZERO = '0x0000000000000000000000000000000000000000';
/** Values below this are counts, offsets, fee rates, tree depths and token amounts, not identifiers. */
const MIN_IDENTIFIER = 2n ** 64n;
/** How far the gas attacker follows withdrawn funds onward. */
const FOLLOW_HOPS = 3;

/** Something that entered or left, placed in chain order. */
export interface Item {
  id: string;
  value: bigint;
  /** Chain position (block, then log index): strictly increasing along one chain. */
  order: number;
  timestamp: number;
  /** The transactions that make up the item, on its chain. */
  txHashes: string[];
}

export interface PoolDeposit extends Item {
  depositor: string;
  /** Its commitment's position in the pool's state tree (1-based, LeafInserted._index). */
  leafIndex: number | null;
  /** Its label (Pool.Deposited._label): what the ASP approves. */
  label: bigint | null;
}

export interface PoolWithdrawal extends Item {
  relayer: string;
  recipient: string;
  /** Leaves in the state tree at the root its proof names (public signal 3): the spent note is among them. */
  proofLeaves: number | null;
  /** Leaves in the tree just before it was mined. */
  leavesBefore: number;
  /** Public signals of its proof: the state root (3) and the ASP root (5) it proves against. */
  stateRoot: bigint | null;
  aspRoot: bigint | null;
}

export interface SourceDeposit extends Item {
  depositAddress: string;
}

export interface Payout extends Item {
  recipient: string;
  /** Where it was paid, and in which token (address, lowercase). */
  chainId: number;
  token: string;
}

/** A guess that `deposit` and `withdrawal` (ids) are the same transfer, and why. */
export interface Link {
  deposit: string;
  withdrawal: string;
  via: string;
}

const position = (log: Pick<ChainLog, 'blockNumber' | 'logIndex'>) => log.blockNumber * 100_000 + log.logIndex;
const words = (hex: string): string[] => (hex.replace(/^0x/, '').match(/.{64}/g) ?? []).map((w) => `0x${w}`);
const topicAddress = (topic: string | undefined) => (topic ? `0x${topic.slice(26)}` : ZERO);
const word = (hex: string, i: number) => BigInt(words(hex)[i] ?? '0x0');

// ------------------------------------------------------------------ what is public: pool, source, destination

interface LeafInsert {
  txHash: string;
  index: number;
  root: bigint;
  order: number;
}

function leafInserts(hub: ChainData, pool: string): LeafInsert[] {
  return hub.logs
    .filter((l) => l.address === pool.toLowerCase() && l.topics[0] === TOPIC.leafInserted)
    .map((l) => ({ txHash: l.txHash, index: Number(word(l.data, 0)), root: word(l.data, 2), order: position(l) }));
}

/** Pool deposits: the Entrypoint's Deposited events (value after the vetting fee), with their leaf in the state tree and their label. */
export function poolDeposits(hub: ChainData, entrypoint: string, pool: string): PoolDeposit[] {
  const inserts = leafInserts(hub, pool);
  const labels = new Map(
    hub.logs.filter((l) => l.address === pool.toLowerCase() && l.topics[0] === TOPIC.poolDeposited).map((l) => [l.txHash, word(l.data, 1)] as const),
  );
  return hub.logs
    .filter((l) => l.address === entrypoint.toLowerCase() && l.topics[0] === TOPIC.entrypointDeposited)
    .map((l) => ({
      id: l.txHash,
      txHashes: [l.txHash],
      value: word(l.data, 1),
      order: position(l),
      timestamp: l.timestamp,
      depositor: topicAddress(l.topics[1]),
      leafIndex: inserts.find((i) => i.txHash === l.txHash)?.index ?? null,
      label: labels.get(l.txHash) ?? null,
    }));
}

/**
 * Pool withdrawals: the Entrypoint's WithdrawalRelayed events (value = what left the pool, before the relay
 * fee), with the tree size at the state root their proof names (read from the relay() calldata).
 */
export function poolWithdrawals(hub: ChainData, entrypoint: string, pool: string): PoolWithdrawal[] {
  const inserts = leafInserts(hub, pool);
  const byRoot = new Map(inserts.map((i) => [i.root, i]));
  const signals = (txHash: string): readonly bigint[] | null => {
    const tx = hub.txByHash.get(txHash);
    if (!tx || tx.to !== entrypoint.toLowerCase()) return null;
    try {
      return decodeFunctionData({ abi: relayAbi, data: tx.input as `0x${string}` }).args[1].pubSignals;
    } catch {
      return null;
    }
  };
  return hub.logs
    .filter((l) => l.address === entrypoint.toLowerCase() && l.topics[0] === TOPIC.withdrawalRelayed)
    .map((l) => {
      const pub = signals(l.txHash);
      const root = pub?.[3] ?? null;
      return {
        id: l.txHash,
        txHashes: [l.txHash],
        value: word(l.data, 0),
        order: position(l),
        timestamp: l.timestamp,
        relayer: topicAddress(l.topics[1]),
        recipient: topicAddress(l.topics[2]),
        proofLeaves: root === null ? null : (byRoot.get(root)?.index ?? null),
        leavesBefore: inserts.filter((i) => i.txHash !== l.txHash && i.order < position(l)).length,
        stateRoot: root,
        aspRoot: pub?.[5] ?? null,
      };
    });
}

interface TokenTransfer {
  from: string;
  to: string;
  value: bigint;
  order: number;
  timestamp: number;
  txHash: string;
}

export function tokenTransfers(chain: ChainData, token: string): TokenTransfer[] {
  return chain.logs
    .filter((l) => l.address === token.toLowerCase() && l.topics[0] === TOPIC.transfer && l.topics.length === 3)
    .map((l) => ({
      from: topicAddress(l.topics[1]),
      to: topicAddress(l.topics[2]),
      value: BigInt(l.data),
      order: position(l),
      timestamp: l.timestamp,
      txHash: l.txHash,
    }))
    .sort((a, b) => a.order - b.order);
}

/**
 * Source-chain deposits. With the bridge's public record of what it received (`bridgeSends`: Relay requests' inTxs,
 * CCTP burns), a deposit address is an address that sent one of those; otherwise, an address that receives the token
 * and later sends it onward (which also takes in users' own wallets that forward what they received). Its deposit is
 * the first transfer into it from an address that is not itself one. The item's transactions are that transfer and
 * the deposit address's onward sends.
 */
export function sourceDeposits(source: ChainData, token: string, bridgeSends: Set<string> | null = null): SourceDeposit[] {
  const transfers = tokenTransfers(source, token);
  const firstSend = new Map<string, number>();
  for (const t of transfers) if (!firstSend.has(t.from)) firstSend.set(t.from, t.order);
  const forwards = (t: TokenTransfer) => t.from !== ZERO && (firstSend.get(t.to) ?? -1) > t.order;
  const depositAddresses = bridgeSends
    ? new Set(transfers.filter((t) => bridgeSends.has(t.txHash)).map((t) => t.from))
    : new Set(transfers.filter(forwards).map((t) => t.to));
  const deposits = new Map<string, SourceDeposit>();
  for (const t of transfers) {
    if (!depositAddresses.has(t.to) || depositAddresses.has(t.from) || t.from === ZERO || deposits.has(t.to)) continue;
    const onward = transfers.filter((o) => o.from === t.to && o.order > t.order).map((o) => o.txHash);
    deposits.set(t.to, { id: t.to, depositAddress: t.to, value: t.value, order: t.order, timestamp: t.timestamp, txHashes: [t.txHash, ...onward] });
  }
  return [...deposits.values()];
}

/** Destination payouts: token transfers (not mints) to an account that never sends them on. */
export function payouts(destination: ChainData, token: string): Payout[] {
  const transfers = tokenTransfers(destination, token);
  const senders = new Set(transfers.map((t) => t.from));
  return transfers
    .filter((t) => t.from !== ZERO && !senders.has(t.to) && !destination.contracts.has(t.to))
    .map((t) => ({
      id: t.txHash,
      recipient: t.to,
      value: t.value,
      order: t.order,
      timestamp: t.timestamp,
      txHashes: [t.txHash],
      chainId: destination.chainId,
      token: token.toLowerCase(),
    }));
}

// ------------------------------------------------------------------ attack 1: shared identifiers

/** Every high-entropy value (addresses, hashes, field elements) in the transactions: sender, target, calldata words, log emitters, topics, data words. */
export function identifiersOf(chain: ChainData, txHashes: string[]): Map<string, string> {
  const found = new Map<string, string>();
  const add = (raw: string | null, where: string) => {
    if (!raw || raw === '0x') return;
    const value = BigInt(raw);
    if (value < MIN_IDENTIFIER) return;
    const key = value.toString(16);
    if (!found.has(key)) found.set(key, where);
  };
  for (const hash of txHashes) {
    const tx = chain.txByHash.get(hash);
    if (tx) {
      add(tx.from, 'tx.from');
      add(tx.to, 'tx.to');
      for (const [i, w] of words(`0x${tx.input.slice(10)}`).entries()) add(w, `calldata[${i}]`);
    }
    for (const log of chain.logsByTx.get(hash) ?? []) {
      const name = EVENT_NAMES.get(log.topics[0] ?? '') ?? `event ${log.topics[0]?.slice(0, 10)}`;
      add(log.address, `${name} emitter`);
      for (const [i, t] of log.topics.slice(1).entries()) add(t, `${name}.topic[${i + 1}]`);
      for (const [i, w] of words(log.data).entries()) add(w, `${name}.data[${i}]`);
    }
  }
  return found;
}

/**
 * Links a deposit and a withdrawal when some identifier appears in exactly one deposit and exactly one
 * withdrawal (a value shared more widely, like a contract address, names no pair).
 */
export function identifierLinks(
  deposits: Array<{ id: string; chain: ChainData; txHashes: string[] }>,
  withdrawals: Array<{ id: string; chain: ChainData; txHashes: string[] }>,
): Link[] {
  const index = (items: typeof deposits) => {
    const byValue = new Map<string, Array<{ id: string; where: string }>>();
    for (const item of items) {
      for (const [value, where] of identifiersOf(item.chain, item.txHashes)) byValue.set(value, [...(byValue.get(value) ?? []), { id: item.id, where }]);
    }
    return byValue;
  };
  const inDeposits = index(deposits);
  const inWithdrawals = index(withdrawals);
  const links = new Map<string, Link>();
  for (const [value, ds] of inDeposits) {
    const ws = inWithdrawals.get(value);
    if (ds.length !== 1 || ws?.length !== 1) continue;
    const [d, w] = [ds[0]!, ws[0]!];
    const key = `${d.id}|${w.id}`;
    if (!links.has(key)) links.set(key, { deposit: d.id, withdrawal: w.id, via: `${d.where} = ${w.where} (0x${value.slice(0, 12)}…)` });
  }
  return [...links.values()];
}

/**
 * Bridge-in fills on the hub: token transfers into a pool depositor before its deposit. Used as the positive
 * control of the identifier attack (a fill and its deposit share the hub account, so they must link).
 */
export function hubFills(hub: ChainData, hubToken: string, deposits: PoolDeposit[]): Item[] {
  const transfers = tokenTransfers(hub, hubToken);
  return deposits.flatMap((d) => {
    const fill = transfers.filter((t) => t.to === d.depositor && t.order < d.order).at(-1);
    return fill ? [{ id: fill.txHash, value: fill.value, order: fill.order, timestamp: fill.timestamp, txHashes: [fill.txHash] }] : [];
  });
}

/**
 * A withdrawal's proof names a state root (public signal 3), the root right after some leaf was inserted.
 * When that newest leaf is a deposit, link the withdrawal to it (the one deposit the root singles out).
 */
export function stateRootLinks(deposits: PoolDeposit[], withdrawals: PoolWithdrawal[]): Link[] {
  return withdrawals.flatMap((w) => {
    const newest = deposits.find((d) => d.leafIndex !== null && d.leafIndex === w.proofLeaves);
    return newest ? [{ deposit: newest.id, withdrawal: w.id, via: `proof state root = root after leaf ${w.proofLeaves} (a deposit)` }] : [];
  });
}

/** The spent note is in the tree at the proof's root: a deposit with a later leaf cannot be the one withdrawn. */
export const insideProofRoot = (d: Item, w: Item): boolean => {
  const leaf = (d as PoolDeposit).leafIndex;
  const proof = (w as PoolWithdrawal).proofLeaves;
  return leaf === null || leaf === undefined || proof === null || proof === undefined || leaf <= proof;
};

// ------------------------------------------------------------------ attack 2: gas funding graph

export interface FunderSummary {
  funder: string;
  /** Deposits and withdrawals with an account this funder sent native value to. */
  deposits: number;
  withdrawals: number;
}

/** Accounts (not contracts) that later received the token from `start`, following up to FOLLOW_HOPS hops. */
function onward(transfers: TokenTransfer[], start: string, after: number, contracts: Set<string>): string[] {
  const reached = new Set<string>();
  let frontier = [{ account: start, after }];
  for (let hop = 0; hop < FOLLOW_HOPS && frontier.length > 0; hop++) {
    const next: typeof frontier = [];
    for (const { account, after: since } of frontier) {
      for (const t of transfers) {
        if (t.from !== account || t.order <= since || reached.has(t.to) || contracts.has(t.to)) continue;
        reached.add(t.to);
        next.push({ account: t.to, after: t.order });
      }
    }
    frontier = next;
  }
  return [...reached];
}

/**
 * Builds funder → account edges from every native-value transaction on the hub, then links a deposit and a
 * withdrawal when a funder (or a direct native transfer between their accounts) touches exactly that one
 * deposit and that one withdrawal. Deposit-side accounts: the depositor and the deposit's sender;
 * withdrawal-side: the submitter, the recipient and whoever the recipient moves the funds to.
 */
export function gasFundingLinks(
  hub: ChainData,
  hubToken: string,
  deposits: PoolDeposit[],
  withdrawals: PoolWithdrawal[],
): { links: Link[]; funders: FunderSummary[] } {
  const isAccount = (a: string | null | undefined): a is string => !!a && a !== ZERO && !hub.contracts.has(a);
  const transfers = tokenTransfers(hub, hubToken);
  const depositAccounts = new Map(deposits.map((d) => [d.id, new Set([d.depositor, ...d.txHashes.map((h) => hub.txByHash.get(h)?.from)].filter(isAccount))]));
  const withdrawalAccounts = new Map(
    withdrawals.map((w) => [
      w.id,
      new Set([w.recipient, ...w.txHashes.map((h) => hub.txByHash.get(h)?.from), ...onward(transfers, w.recipient, w.order, hub.contracts)].filter(isAccount)),
    ]),
  );
  const touching = (accounts: Map<string, Set<string>>, account: string) => [...accounts].filter(([, set]) => set.has(account)).map(([id]) => id);

  const funded = new Map<string, Set<string>>();
  for (const tx of hub.txs) {
    if (tx.value > 0n && isAccount(tx.to)) funded.set(tx.from, (funded.get(tx.from) ?? new Set()).add(tx.to));
  }

  const links = new Map<string, Link>();
  const addIfUnique = (ds: Set<string>, ws: Set<string>, via: string) => {
    if (ds.size !== 1 || ws.size !== 1) return;
    const [d] = ds;
    const [w] = ws;
    if (!links.has(`${d}|${w}`)) links.set(`${d}|${w}`, { deposit: d!, withdrawal: w!, via });
  };

  const funders: FunderSummary[] = [];
  for (const [funder, accounts] of funded) {
    const ds = new Set([...accounts].flatMap((a) => touching(depositAccounts, a)));
    const ws = new Set([...accounts].flatMap((a) => touching(withdrawalAccounts, a)));
    if (ds.size + ws.size > 0) funders.push({ funder, deposits: ds.size, withdrawals: ws.size });
    addIfUnique(ds, ws, `common funder ${funder}`);
    // A direct edge: an account of one side funds an account of the other.
    for (const account of accounts) {
      addIfUnique(
        new Set(touching(depositAccounts, funder)),
        new Set(touching(withdrawalAccounts, account)),
        `deposit-side ${funder} funded withdrawal-side ${account}`,
      );
      addIfUnique(
        new Set(touching(depositAccounts, account)),
        new Set(touching(withdrawalAccounts, funder)),
        `withdrawal-side ${funder} funded deposit-side ${account}`,
      );
    }
  }
  return { links: [...links.values()], funders };
}

// ------------------------------------------------------------------ attack 3: amount + time

/**
 * Order-preserving matching: the fee path is monotonic, so the i-th smallest deposit goes with the i-th
 * smallest withdrawal. Among deposits of equal value (a tie block) the guess is FIFO: in time order, each
 * deposit takes the earliest unused withdrawal of the block's ranks that came after it (and, when given,
 * that `eligible` allows). Returns deposit id → withdrawal id.
 */
export function rankFifoMatch(
  deposits: Item[],
  withdrawals: Item[],
  eligible: (d: Item, w: Item) => boolean = () => true,
  crossChain = false,
): Map<string, string> {
  const after = (d: Item, w: Item) => (crossChain ? w.timestamp >= d.timestamp : w.order > d.order);
  const byValueThenTime = (a: Item, b: Item) => (a.value === b.value ? a.order - b.order : a.value < b.value ? -1 : 1);
  const ds = [...deposits].sort(byValueThenTime);
  const ws = [...withdrawals].sort(byValueThenTime);
  const guess = new Map<string, string>();
  for (let start = 0; start < ds.length; ) {
    let end = start;
    while (end < ds.length && ds[end]!.value === ds[start]!.value) end++;
    const block = ds.slice(start, end).sort((a, b) => a.order - b.order);
    const candidates = ws.slice(start, end).sort((a, b) => a.order - b.order);
    const used = new Set<string>();
    for (const d of block) {
      const pick = candidates.find((w) => !used.has(w.id) && after(d, w) && eligible(d, w)) ?? candidates.find((w) => !used.has(w.id));
      if (!pick) continue;
      used.add(pick.id);
      guess.set(d.id, pick.id);
    }
    start = end;
  }
  return guess;
}

/**
 * Uses the public quote to predict each source deposit's payout: how many deposits have a payout of exactly one of
 * the values quoted for it (one per destination it may go to): the amount is then predictable from public data.
 */
export function quotePredictable(deposits: SourceDeposit[], paid: Item[], predicted: Map<string, bigint[]>): number {
  const values = new Set(paid.map((p) => p.value));
  return deposits.filter((d) => (predicted.get(d.id) ?? []).some((v) => values.has(v))).length;
}

// ------------------------------------------------------------------ the bridges are public: entries and exits

/**
 * A route as it enters the pool: the pool deposit and, traced back through the public bridge-in, the source-chain
 * deposit it came from. Tracing needs no guess: Relay's request history names the deposit and the fill of every
 * order, and a CCTP message names its burner and mint recipient.
 */
export interface Entry {
  /** The pool deposit's id (its transaction). */
  id: string;
  deposit: PoolDeposit;
  source: SourceDeposit | null;
  via: string;
}

/** A route as it leaves the pool: the withdrawal and, followed through the public bridge-out, the payout it funded. */
export interface Exit {
  /** The withdrawal's id (its transaction). */
  id: string;
  withdrawal: PoolWithdrawal;
  payout: Payout | null;
  via: string;
  /** The class its payout shows (classifyExits); null when the payout was not traced. */
  classKey: string | null;
}

/** The last token transfer into the pool depositor before its deposit: the bridge-in's delivery. */
function fillOf(transfers: TokenTransfer[], d: PoolDeposit): TokenTransfer | undefined {
  return transfers.filter((t) => t.to === d.depositor && t.order < d.order).at(-1);
}

/**
 * Deposit-address mode: each pool deposit's fill on the hub, and the Relay request whose outTxs hold that fill;
 * its inTxs are the source deposit's onward send. Without a request history (an API that has none), source
 * deposits and fills are matched by value rank (the bridge-in fee is monotonic), ties first-in-first-out.
 */
export function relayEntries(hub: ChainData, hubToken: string, deposits: PoolDeposit[], sources: SourceDeposit[], requests: RelayRequest[] | null): Entry[] {
  const transfers = tokenTransfers(hub, hubToken);
  if (requests) {
    const byOutTx = new Map<string, RelayRequest>();
    for (const r of requests) for (const t of r.outTxs) byOutTx.set(t.hash, r);
    const sourceByTx = new Map<string, SourceDeposit>();
    for (const s of sources) for (const h of s.txHashes) sourceByTx.set(h, s);
    return deposits.map((d) => {
      const fill = fillOf(transfers, d);
      const request = fill ? byOutTx.get(fill.txHash) : undefined;
      const source = request?.inTxs.map((t) => sourceByTx.get(t.hash)).find((s) => s !== undefined) ?? null;
      return { id: d.id, deposit: d, source, via: source ? 'Relay request history' : 'untraced' };
    });
  }
  const fills = deposits.flatMap((d) => {
    const fill = fillOf(transfers, d);
    return fill ? [{ id: d.id, value: fill.value, order: fill.order, timestamp: fill.timestamp, txHashes: [fill.txHash] }] : [];
  });
  const guess = rankFifoMatch(sources, fills, () => true, true);
  const sourceOf = new Map([...guess].map(([source, deposit]) => [deposit, sources.find((s) => s.id === source)!] as const));
  return deposits.map((d) => {
    const source = sourceOf.get(d.id) ?? null;
    return { id: d.id, deposit: d, source, via: source ? 'value rank (no Relay history)' : 'untraced' };
  });
}

/**
 * Deposit-address mode: the Relay request whose deposit address received the withdrawal names the payout
 * (outTxs). Without a request history, withdrawals and payouts are matched by value rank (exact-output bridge-out:
 * monotonic), ties first-in-first-out.
 */
export function relayExits(withdrawals: PoolWithdrawal[], paid: Payout[], requests: RelayRequest[] | null): Exit[] {
  if (requests) {
    const payoutByTx = new Map(paid.map((p) => [p.id, p]));
    return withdrawals.map((w) => {
      const request = requests.find((r) => r.depositAddress === w.recipient || r.inTxs.some((t) => t.hash === w.id));
      const payout = request?.outTxs.map((t) => payoutByTx.get(t.hash)).find((p) => p !== undefined) ?? null;
      return { id: w.id, withdrawal: w, payout, via: payout ? 'Relay request history' : 'untraced', classKey: null };
    });
  }
  const guess = rankFifoMatch(withdrawals, paid, () => true, true);
  return withdrawals.map((w) => {
    const payout = paid.find((p) => p.id === guess.get(w.id)) ?? null;
    return { id: w.id, withdrawal: w, payout, via: payout ? 'value rank (no Relay history)' : 'untraced', classKey: null };
  });
}

export interface CctpBurn {
  chainId: number;
  depositor: string;
  mintRecipient: string;
  amount: bigint;
  destinationDomain: number;
  txHash: string;
  order: number;
}

export interface CctpMint {
  chainId: number;
  sourceDomain: number;
  /** BurnMessageV2.messageSender: who burned. */
  burner: string;
  mintRecipient: string;
  /** What the recipient received in the mint's transaction (the burn less Circle's fee). */
  minted: bigint;
  txHash: string;
  order: number;
  timestamp: number;
}

const bytes32Address = (hex: string) => `0x${hex.replace(/^0x/, '').slice(24, 64)}`.toLowerCase();

/** DepositForBurn events of a chain's TokenMessengerV2. */
export function cctpBurns(chain: ChainData, tokenMessenger: string): CctpBurn[] {
  return chain.logs
    .filter((l) => l.address === tokenMessenger.toLowerCase() && l.topics[0] === TOPIC.depositForBurn)
    .map((l) => {
      const args = decodeEventLog({ abi: cctpAbi, eventName: 'DepositForBurn', data: l.data as `0x${string}`, topics: l.topics as [`0x${string}`] }).args as {
        depositor: string;
        mintRecipient: string;
        amount: bigint;
        destinationDomain: number;
      };
      return {
        chainId: chain.chainId,
        depositor: args.depositor.toLowerCase(),
        mintRecipient: bytes32Address(args.mintRecipient),
        amount: args.amount,
        destinationDomain: args.destinationDomain,
        txHash: l.txHash,
        order: position(l),
      };
    });
}

/** MessageReceived events of a chain's MessageTransmitterV2 with the BurnMessageV2 body read, and the token minted in the same transaction. */
export function cctpMints(chain: ChainData, messageTransmitter: string, token: string): CctpMint[] {
  const transfers = tokenTransfers(chain, token);
  return chain.logs
    .filter((l) => l.address === messageTransmitter.toLowerCase() && l.topics[0] === TOPIC.messageReceived)
    .map((l) => {
      const args = decodeEventLog({ abi: cctpAbi, eventName: 'MessageReceived', data: l.data as `0x${string}`, topics: l.topics as [`0x${string}`] }).args as {
        sourceDomain: number;
        messageBody: string;
      };
      const body = args.messageBody.replace(/^0x/, '');
      // BurnMessageV2: version [0,4), burnToken [4,36), mintRecipient [36,68), amount [68,100), messageSender [100,132).
      const mintRecipient = bytes32Address(body.slice(72, 136));
      const burner = bytes32Address(body.slice(200, 264));
      const minted = transfers.filter((t) => t.txHash === l.txHash && t.from === ZERO && t.to === mintRecipient).reduce((a, t) => a + t.value, 0n);
      return {
        chainId: chain.chainId,
        sourceDomain: args.sourceDomain,
        burner,
        mintRecipient,
        minted,
        txHash: l.txHash,
        order: position(l),
        timestamp: l.timestamp,
      };
    });
}

/** Burn-and-mint mode: the hub account that deposits was minted to by a CCTP message whose burner is the source deposit address. */
export function cctpEntries(hubMints: CctpMint[], deposits: PoolDeposit[], sources: SourceDeposit[], sourceBurns: CctpBurn[]): Entry[] {
  return deposits.map((d) => {
    const mint = hubMints.filter((m) => m.mintRecipient === d.depositor && m.order < d.order).at(-1);
    const source = mint
      ? (sources.find((s) => s.id === mint.burner || sourceBurns.some((b) => b.depositor === mint.burner && s.txHashes.includes(b.txHash))) ?? null)
      : null;
    return { id: d.id, deposit: d, source, via: source ? 'CCTP message (burner → mint recipient)' : 'untraced' };
  });
}

/**
 * Burn-and-mint mode: a withdrawal's recipient that burns is an exit account, and the CCTP message its burn sent
 * names the mint recipient on the destination (the payout: the mint). A recipient that does not burn was paid
 * directly (the hub is the destination): the payout is the withdrawal's own transfer to it.
 */
export function cctpExits(
  hub: ChainData,
  hubToken: string,
  withdrawals: PoolWithdrawal[],
  hubBurns: CctpBurn[],
  mints: CctpMint[],
  tokens: Map<number, string>,
): Exit[] {
  const transfers = tokenTransfers(hub, hubToken);
  return withdrawals.map((w) => {
    const burn = hubBurns.find((b) => b.depositor === w.recipient && b.order > w.order);
    if (burn) {
      const mint = mints.find((m) => m.burner === w.recipient && m.mintRecipient === burn.mintRecipient);
      const payout: Payout | null = mint
        ? {
            id: mint.txHash,
            recipient: mint.mintRecipient,
            value: mint.minted,
            order: mint.order,
            timestamp: mint.timestamp,
            txHashes: [mint.txHash],
            chainId: mint.chainId,
            token: tokens.get(mint.chainId) ?? '',
          }
        : null;
      return { id: w.id, withdrawal: w, payout, via: mint ? 'exit account → burn → CCTP message → mint' : 'burn without a mint seen', classKey: null };
    }
    const direct = transfers.find((t) => t.txHash === w.id && t.to === w.recipient);
    const payout: Payout | null = direct
      ? {
          id: w.id,
          recipient: w.recipient,
          value: direct.value,
          order: direct.order,
          timestamp: direct.timestamp,
          txHashes: [w.id],
          chainId: hub.chainId,
          token: hubToken.toLowerCase(),
        }
      : null;
    return { id: w.id, withdrawal: w, payout, via: payout ? 'direct payout on the hub' : 'untraced', classKey: null };
  });
}

// ------------------------------------------------------------------ amount classes by quote inversion

/** A public class: where it pays (chain, token) and how much. */
export const classKey = (chainId: number, token: string, value: bigint) => `${chainId}:${token.toLowerCase()}:${value}`;

/** A destination the attacker inverts the quote for: its quote key (observe.ts destinationKey), chain and token address. */
export interface Destination {
  key: string;
  chainId: number;
  token: string;
}

/**
 * The public grid of amount classes (docs/privacy.md, docs/api.md): a value's three leading digits rounded down to a
 * step of 1 (100–199), 2 (200–499) or 5 (500–999), the other digits zero. Written here from the published rule.
 */
export function gridFloor(value: bigint): bigint {
  const digits = value.toString().length;
  if (digits <= 3) return value;
  const scale = 10n ** BigInt(digits - 3);
  const mantissa = value / scale;
  const step = mantissa < 200n ? 1n : mantissa < 500n ? 2n : 5n;
  return (mantissa / step) * step * scale;
}

/**
 * The class each exit's payout shows. With amount classes (`gridded`: the quote publishes them) a payout's class is
 * its value rounded down to the grid (a payout pays its class's value, or a little more when a burn-and-mint fee came
 * in under its maximum); without them, its exact value (the quote predicts it exactly).
 */
export function classifyExits(exits: Exit[], gridded: boolean): Exit[] {
  return exits.map((x) => ({
    ...x,
    classKey: x.payout ? classKey(x.payout.chainId, x.payout.token, gridded ? gridFloor(x.payout.value) : x.payout.value) : null,
  }));
}

/**
 * Each entry's possible classes: the public quote of its source deposit's exact value, for every destination it may
 * go to (the deposit does not say which). `quotes`: human amount → destination key → answer. An entry without a
 * traced source gets null: any class.
 */
export function quotedClasses(
  entries: Entry[],
  quotes: Map<string, Map<string, QuoteAnswer>>,
  destinations: Destination[],
  human: (units: bigint) => string,
): Map<string, Set<string> | null> {
  return new Map(
    entries.map((e) => {
      if (!e.source) return [e.id, null] as const;
      const answers = quotes.get(human(e.source.value));
      const keys = destinations.flatMap((d) => {
        const a = answers?.get(d.key);
        return a ? [classKey(d.chainId, d.token, a.classValue ?? a.value)] : [];
      });
      return [e.id, new Set(keys)] as const;
    }),
  );
}

/**
 * The price fingerprint: a cross-asset quote of `input` changes with the held price, so the classes a deposit of
 * `input` can have are the values the attacker's samples saw between `windowSeconds` before the deposit (the
 * published deposit timeout: it was created then at the earliest) and the deposit itself, most recent first.
 */
export function fingerprintClasses(entries: Entry[], samples: QuoteSample[], input: bigint, dest: Destination, windowSeconds: number): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const e of entries) {
    if (!e.source || e.source.value !== input) continue;
    const until = (e.source.timestamp + 1) * 1000;
    const since = (e.source.timestamp - windowSeconds) * 1000;
    const seen = samples.filter((s) => s.at >= since && s.at <= until).sort((a, b) => b.at - a.at);
    out.set(e.id, [...new Set(seen.map((s) => classKey(dest.chainId, dest.token, s.value)))]);
  }
  return out;
}

/** Runs of the samples with one (held-until, value): how many price epochs the attacker saw, and how many values. */
export function epochsSeen(samples: QuoteSample[]): { epochs: number; values: number } {
  let epochs = 0;
  let last = '';
  for (const s of [...samples].sort((a, b) => a.at - b.at)) {
    const key = `${s.heldUntil}|${s.value}`;
    if (key !== last) epochs++;
    last = key;
  }
  return { epochs, values: new Set(samples.map((s) => s.value)).size };
}

/**
 * Attack: the price fingerprint. Deposits in time order each take the earliest unused payout, after it, whose value is
 * the most recent value the quote had before the deposit (else the next most recent, and so on).
 */
export function fingerprintMatch(entries: Entry[], exits: Exit[], fingerprints: Map<string, string[]>): Map<string, string> {
  const guess = new Map<string, string>();
  const used = new Set<string>();
  const ordered = entries.filter((e) => fingerprints.has(e.id)).sort((a, b) => a.deposit.order - b.deposit.order);
  const byTime = [...exits].filter((x) => x.payout).sort((a, b) => a.withdrawal.order - b.withdrawal.order);
  for (const e of ordered) {
    for (const key of fingerprints.get(e.id)!) {
      const pick = byTime.find((x) => !used.has(x.id) && x.withdrawal.order > e.deposit.order && x.classKey === key);
      if (!pick) continue;
      used.add(pick.id);
      guess.set(e.id, pick.id);
      break;
    }
  }
  return guess;
}

/**
 * The fingerprint alone, without time order: for each deposit, the payouts of the first predicted value that has any.
 * A guess among them at random is right with probability 1 / their number when its own payout is one of them.
 */
export function fingerprintCandidates(entries: Entry[], exits: Exit[], fingerprints: Map<string, string[]>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const e of entries) {
    for (const key of fingerprints.get(e.id) ?? []) {
      const ids = exits.filter((x) => x.classKey === key && x.withdrawal.order > e.deposit.order).map((x) => x.id);
      if (ids.length === 0) continue;
      out.set(e.id, ids);
      break;
    }
  }
  return out;
}

// ------------------------------------------------------------------ the ASP's roots, reproduced

/** Labels of notes that went back to their depositor (Pool.Ragequit): never the note a withdrawal spent. */
export function ragequitLabels(hub: ChainData, pool: string): Set<bigint> {
  return new Set(hub.logs.filter((l) => l.address === pool.toLowerCase() && l.topics[0] === TOPIC.ragequit).map((l) => word(l.data, 1)));
}

/** The ASP roots posted on chain (Entrypoint.RootUpdated), in order. */
export function aspRootsOnChain(hub: ChainData, entrypoint: string): bigint[] {
  return hub.logs.filter((l) => l.address === entrypoint.toLowerCase() && l.topics[0] === TOPIC.rootUpdated).map((l) => word(l.data, 0));
}

/**
 * The LeanIMT (Poseidon) root of every prefix of the approved labels, as the ASP builds its tree: root → how many
 * labels were approved at it. A withdrawal's proof names one of these roots (public signal 5).
 */
export function aspPrefixes(leaves: bigint[]): Map<bigint, number> {
  const tree = new LeanIMT<bigint>((a, b) => poseidon2([a, b]));
  const prefixes = new Map<bigint, number>();
  leaves.forEach((leaf, i) => {
    tree.insert(leaf);
    prefixes.set(tree.root, i + 1);
  });
  return prefixes;
}

// ------------------------------------------------------------------ candidates of a withdrawal

export interface Candidates {
  /** The class its payout shows (null: payout not traced). */
  classKey: string | null;
  /** Entries that may be the note it spent. */
  ids: string[];
  /** Same-class deposits ruled out: inserted after its state root, not approved at its ASP root, ragequit, and (gateTiming) by time. */
  excluded: { stateRoot: number; asp: number; ragequit: number; timing?: number };
  /** Labels approved at its ASP root (null: the root was not reproduced from the ASP's list). */
  approvedAtRoot: number | null;
}

/**
 * A withdrawal could have spent an entry's note when the entry is of the class its payout shows (by quote inversion
 * or fingerprint), its leaf is inside the state root the proof names, its label was approved at the ASP root the
 * proof names, and it was never ragequit.
 */
export function withdrawalCandidates(
  entries: Entry[],
  exits: Exit[],
  classes: Map<string, Set<string> | null>,
  asp: { leaves: bigint[]; prefixes: Map<bigint, number> } | null,
  ragequit: Set<bigint>,
): Map<string, Candidates> {
  const out = new Map<string, Candidates>();
  for (const x of exits) {
    const key = x.classKey;
    const w = x.withdrawal;
    const prefix = asp && w.aspRoot !== null ? asp.prefixes.get(w.aspRoot) : undefined;
    const approved = asp && prefix !== undefined ? new Set(asp.leaves.slice(0, prefix)) : null;
    const excluded = { stateRoot: 0, asp: 0, ragequit: 0 };
    const ids: string[] = [];
    for (const e of entries) {
      const possible = classes.get(e.id);
      if (key !== null && possible && !possible.has(key)) continue;
      const d = e.deposit;
      if (d.order > w.order || (d.leafIndex !== null && w.proofLeaves !== null && d.leafIndex > w.proofLeaves)) {
        excluded.stateRoot++;
        continue;
      }
      if (approved && (d.label === null || !approved.has(d.label))) {
        excluded.asp++;
        continue;
      }
      if (d.label !== null && ragequit.has(d.label)) {
        excluded.ragequit++;
        continue;
      }
      ids.push(e.id);
    }
    out.set(x.id, { classKey: key, ids, excluded, approvedAtRoot: prefix ?? null });
  }
  return out;
}

/**
 * When each label was first approved on chain: the block time of the first RootUpdated whose root covers it (a root is
 * matched to the prefix of the ASP's approved labels it is the root of).
 */
export function labelApprovalTimes(hub: ChainData, entrypoint: string, leaves: bigint[], prefixes: Map<bigint, number>): Map<bigint, number> {
  const out = new Map<bigint, number>();
  for (const log of hub.logs.filter((l) => l.address === entrypoint.toLowerCase() && l.topics[0] === TOPIC.rootUpdated)) {
    const covered = prefixes.get(word(log.data, 0)) ?? 0;
    for (const label of leaves.slice(0, covered)) if (!out.has(label)) out.set(label, log.timestamp);
  }
  return out;
}

/**
 * Attack: the gate's timing, with the service's published rules (docs/privacy.md, issue 32). A note may leave only from
 * the exit epoch after the one its gate opened in, and its gate opens no earlier than its approval (the first public
 * RootUpdated that covers its label) and its minimum age (PRIVACY_MIN_PEER_AGE_SECONDS in the pool by the exit epoch's
 * start). A withdrawal is mined at or after its moment in its exit epoch, so that epoch began at most at the start of
 * the epoch it was mined in: a candidate must have been approved and aged before then. No upper bound: under the exit
 * lottery a gated note leaves in each epoch with the class's chance, so it may stay many epochs after its gate opened
 * (until a flush), and the old rule's longest wait (a note leaves in the epoch after its gate, so one older than its
 * longest wait would have left already) no longer holds. Sound: it never rules out the spent note. Narrows each
 * withdrawal's candidates; `excluded.timing` counts what time ruled out.
 */
export function gateTimingCandidates(
  candidates: Map<string, Candidates>,
  entries: Entry[],
  exits: Exit[],
  approvedAt: Map<bigint, number>,
  rules: { exitEpochSeconds: number; minPeerAgeSeconds: number },
): Map<string, Candidates> {
  const entryById = new Map(entries.map((e) => [e.id, e]));
  const E = rules.exitEpochSeconds;
  const out = new Map<string, Candidates>();
  for (const x of exits) {
    const c = candidates.get(x.id);
    if (!c) continue;
    const latestExitEpoch = Math.floor(x.withdrawal.timestamp / E) * E;
    const ids = c.ids.filter((id) => {
      const d = entryById.get(id)!.deposit;
      const approval = d.label !== null ? approvedAt.get(d.label) : undefined;
      if (approval !== undefined && approval >= latestExitEpoch) return false;
      return d.timestamp + rules.minPeerAgeSeconds <= latestExitEpoch;
    });
    out.set(x.id, { ...c, ids, excluded: { ...c.excluded, timing: c.ids.length - ids.length } });
  }
  return out;
}

/**
 * Attack: quote inversion, then first-in-first-out inside the class. Withdrawals in mined order each take the
 * earliest unused candidate (same class, inside its roots, not ragequit). `own`: the attacker's own routes (entry →
 * exit), known and kept out of everyone else's guesses.
 */
export function classFifoMatch(
  entries: Entry[],
  exits: Exit[],
  candidates: Map<string, Candidates>,
  own: Map<string, string> = new Map(),
): Map<string, string> {
  const order = new Map(entries.map((e) => [e.id, e.deposit.order]));
  const ownExits = new Set(own.values());
  const used = new Set(own.keys());
  const guess = new Map(own);
  for (const x of [...exits].sort((a, b) => a.withdrawal.order - b.withdrawal.order)) {
    if (ownExits.has(x.id)) continue;
    const pick = (candidates.get(x.id)?.ids ?? []).filter((id) => !used.has(id)).sort((a, b) => order.get(a)! - order.get(b)!)[0];
    if (!pick) continue;
    used.add(pick);
    guess.set(pick, x.id);
  }
  return guess;
}

/** End to end: an entry ↔ exit guess read as source deposit ↔ payout. */
export function endToEndOf(guess: Map<string, string>, entries: Entry[], exits: Exit[]): Map<string, string> {
  const entryById = new Map(entries.map((e) => [e.id, e]));
  const exitById = new Map(exits.map((x) => [x.id, x]));
  const out = new Map<string, string>();
  for (const [e, x] of guess) {
    const source = entryById.get(e)?.source;
    const payout = exitById.get(x)?.payout;
    if (source && payout) out.set(source.id, payout.id);
  }
  return out;
}

// ------------------------------------------------------------------ issue 19: moments the attacker watches

/** What a moment attack scored: routes it tried, named right, the expected count of a uniform guess, and misses. */
export interface MomentScore {
  routes: number;
  linked: number;
  /** Σ 1 / |candidates| over the routes whose own event is a candidate: what a uniform guess among them gets. */
  chance: number;
  /** Routes whose own event fell outside the attacker's window (its rule, not the service, was wrong). */
  misses: number;
  /** Mean candidates per route. */
  meanCandidates: number;
}

/** One route the attacker has a moment for (seconds), the classes its deposit may have, and the truth to score with. */
export interface MomentTarget {
  at: number;
  /** The earliest the event could be (seconds; the route's public funding), when the attacker knows it. */
  from?: number;
  classKeys: Set<string> | null;
  truth: string;
}

/**
 * Attack: a moment tied to a route (when its public view or its webhook receiver heard of its end, when its stray was
 * refunded) against the public events it could follow (withdrawals, payouts): the candidates are the events of the
 * route's class in [max(from, at − windowSeconds), at − minLagSeconds]; the guess is the latest of them (the closest before the
 * moment). Scored next to a uniform guess among the same candidates.
 */
export function momentAttack(
  targets: MomentTarget[],
  events: Array<{ id: string; timestamp: number; classKey: string | null }>,
  window: { windowSeconds: number; minLagSeconds?: number },
): MomentScore {
  let linked = 0;
  let chance = 0;
  let misses = 0;
  let candidates = 0;
  for (const t of targets) {
    const inWindow = events
      .filter((e) => e.timestamp <= t.at - (window.minLagSeconds ?? 0) && e.timestamp >= Math.max(t.from ?? 0, t.at - window.windowSeconds))
      .filter((e) => t.classKeys === null || (e.classKey !== null && t.classKeys.has(e.classKey)))
      .sort((a, b) => b.timestamp - a.timestamp);
    candidates += inWindow.length;
    if (inWindow[0]?.id === t.truth) linked++;
    if (inWindow.some((e) => e.id === t.truth)) chance += 1 / inWindow.length;
    else misses++;
  }
  return { routes: targets.length, linked, chance, misses, meanCandidates: targets.length ? candidates / targets.length : 0 };
}

/**
 * Dust poke, what the attacker reads back: transfers of `token` out of a deposit address that are not the bridge's
 * (Relay's inTxs, CCTP burns): refunds of the stray, with their moment and destination.
 */
export function depositRefunds(source: ChainData, token: string, depositAddresses: Set<string>, bridgeSends: Set<string> | null) {
  return tokenTransfers(source, token)
    .filter((t) => depositAddresses.has(t.from) && !(bridgeSends?.has(t.txHash) ?? false))
    .map((t) => ({ depositAddress: t.from, to: t.to, value: t.value, timestamp: t.timestamp, txHash: t.txHash }));
}

/**
 * Attack: routes that leave at the longest wait. A note deposited at d that is still waiting PRIVACY_MAX_WAIT_SECONDS after
 * the start of d's exit epoch leaves in the exit epoch after that moment (published rules), its withdrawal mined within that epoch and a proof.
 * For each deposit, in the order of those epochs, the guess is the earliest same-class withdrawal not yet taken that was
 * mined in [epoch start, epoch end + proof]; the attacker's own pairs are known and set aside. Scored on `scored`
 * (entry ids of the routes that did leave at the longest wait), next to a uniform guess among the window's withdrawals.
 */
export function longestWaitAttack(
  entries: Entry[],
  exits: Exit[],
  classes: Map<string, Set<string>>,
  rules: { epochSeconds: number; maxWaitSeconds: number; proofSeconds: number },
  own: Map<string, string>,
  scored: Map<string, string>,
): MomentScore {
  const ownExits = new Set(own.values());
  // The longest wait counts from the start of the deposit's epoch; the route leaves in the epoch after it ends.
  const epoch = (t: number) => Math.floor(t / rules.epochSeconds) * rules.epochSeconds;
  const exitStart = (e: Entry) => epoch(epoch(e.deposit.timestamp) + rules.maxWaitSeconds) + rules.epochSeconds;
  const taken = new Set<string>();
  const guesses = new Map<string, { guess: string | null; candidates: string[] }>();
  for (const e of [...entries].filter((x) => !own.has(x.id)).sort((a, b) => exitStart(a) - exitStart(b) || a.deposit.order - b.deposit.order)) {
    const start = exitStart(e);
    const keys = classes.get(e.id) ?? new Set<string>();
    const window = exits
      .filter((x) => !ownExits.has(x.id) && x.classKey !== null && keys.has(x.classKey))
      .filter((x) => x.withdrawal.timestamp >= start && x.withdrawal.timestamp <= start + rules.epochSeconds + rules.proofSeconds)
      .sort((a, b) => a.withdrawal.order - b.withdrawal.order);
    const guess = window.find((x) => !taken.has(x.id))?.id ?? null;
    if (guess) taken.add(guess);
    guesses.set(e.id, { guess, candidates: window.map((x) => x.id) });
  }
  let linked = 0;
  let chance = 0;
  let misses = 0;
  let candidates = 0;
  for (const [entry, truth] of scored) {
    const g = guesses.get(entry);
    if (!g) continue;
    candidates += g.candidates.length;
    if (g.guess === truth) linked++;
    if (g.candidates.includes(truth)) chance += 1 / g.candidates.length;
    else misses++;
  }
  return { routes: scored.size, linked, chance, misses, meanCandidates: scored.size ? candidates / scored.size : 0 };
}
