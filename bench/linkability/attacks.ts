/**
 * The attacker: pure functions from public chain data (observe.ts) to guesses. Nothing here knows which
 * route a transaction belongs to; scoring against the truth is score.ts's business.
 *
 * What it CAN see: every transaction (sender, target, calldata, native value), every log, block times and
 * contract code on the source, hub and destination chains; the public contract addresses (tokens, the
 * Privacy Pools Entrypoint and pool); the service's public quote endpoint.
 * What it CANNOT see: Postgres, Temporal, the service's logs or keys, the Relay and ASP operators' own
 * records, and any GET /api/private-route/:id of a route it did not create. (It does not use the ASP's public
 * API either: the labels it serves are in the pool's events already.)
 * Identifiers are high-entropy values only (≥ 2^64: addresses, hashes, field elements); amounts, counts and
 * offsets are left to the amount attacker.
 */
import { decodeFunctionData, parseAbi, toEventSelector } from 'viem';
import type { ChainData, ChainLog } from './observe.ts';

const TOPIC = {
  transfer: toEventSelector('Transfer(address,address,uint256)'),
  entrypointDeposited: toEventSelector('Deposited(address,address,uint256,uint256)'),
  poolDeposited: toEventSelector('Deposited(address,uint256,uint256,uint256,uint256)'),
  withdrawalRelayed: toEventSelector('WithdrawalRelayed(address,address,address,uint256,uint256)'),
  withdrawn: toEventSelector('Withdrawn(address,uint256,uint256,uint256)'),
  leafInserted: toEventSelector('LeafInserted(uint256,uint256,uint256)'),
  rootUpdated: toEventSelector('RootUpdated(uint256,string,uint256)'),
};
const EVENT_NAMES = new Map<string, string>([
  [TOPIC.transfer, 'Transfer'],
  [TOPIC.entrypointDeposited, 'Entrypoint.Deposited'],
  [TOPIC.poolDeposited, 'Pool.Deposited'],
  [TOPIC.withdrawalRelayed, 'WithdrawalRelayed'],
  [TOPIC.withdrawn, 'Pool.Withdrawn'],
  [TOPIC.leafInserted, 'LeafInserted'],
  [TOPIC.rootUpdated, 'RootUpdated'],
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
}

export interface PoolWithdrawal extends Item {
  relayer: string;
  recipient: string;
  /** Leaves in the state tree at the root its proof names (public signal 3): the spent note is among them. */
  proofLeaves: number | null;
  /** Leaves in the tree just before it was mined. */
  leavesBefore: number;
}

export interface SourceDeposit extends Item {
  depositAddress: string;
}

export interface Payout extends Item {
  recipient: string;
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

/** Pool deposits: the Entrypoint's Deposited events (value after the vetting fee), with their leaf in the state tree. */
export function poolDeposits(hub: ChainData, entrypoint: string, pool: string): PoolDeposit[] {
  const inserts = leafInserts(hub, pool);
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
    }));
}

/**
 * Pool withdrawals: the Entrypoint's WithdrawalRelayed events (value = what left the pool, before the relay
 * fee), with the tree size at the state root their proof names (read from the relay() calldata).
 */
export function poolWithdrawals(hub: ChainData, entrypoint: string, pool: string): PoolWithdrawal[] {
  const inserts = leafInserts(hub, pool);
  const byRoot = new Map(inserts.map((i) => [i.root, i]));
  const proofRoot = (txHash: string): bigint | null => {
    const tx = hub.txByHash.get(txHash);
    if (!tx || tx.to !== entrypoint.toLowerCase()) return null;
    try {
      return decodeFunctionData({ abi: relayAbi, data: tx.input as `0x${string}` }).args[1].pubSignals[3];
    } catch {
      return null;
    }
  };
  return hub.logs
    .filter((l) => l.address === entrypoint.toLowerCase() && l.topics[0] === TOPIC.withdrawalRelayed)
    .map((l) => {
      const root = proofRoot(l.txHash);
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
 * Source-chain deposits: an address that receives the token and later sends it onward is a deposit address;
 * its deposit is the first transfer into it from an address that is not itself one (the start of a chain).
 * The item's transactions are that transfer and the deposit address's onward sends.
 */
export function sourceDeposits(source: ChainData, token: string): SourceDeposit[] {
  const transfers = tokenTransfers(source, token);
  const firstSend = new Map<string, number>();
  for (const t of transfers) if (!firstSend.has(t.from)) firstSend.set(t.from, t.order);
  const forwards = (t: TokenTransfer) => t.from !== ZERO && (firstSend.get(t.to) ?? -1) > t.order;
  const depositAddresses = new Set(transfers.filter(forwards).map((t) => t.to));
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
    .map((t) => ({ id: t.txHash, recipient: t.to, value: t.value, order: t.order, timestamp: t.timestamp, txHashes: [t.txHash] }));
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
export function rankFifoMatch(deposits: Item[], withdrawals: Item[], eligible: (d: Item, w: Item) => boolean = () => true): Map<string, string> {
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
      const pick = candidates.find((w) => !used.has(w.id) && w.order > d.order && eligible(d, w)) ?? candidates.find((w) => !used.has(w.id));
      if (!pick) continue;
      used.add(pick.id);
      guess.set(d.id, pick.id);
    }
    start = end;
  }
  return guess;
}

/**
 * Uses the public quote to predict each source deposit's payout: how many deposits have a payout of exactly
 * the quoted value (the amount is then fully predictable from public data).
 */
export function quotePredictable(deposits: SourceDeposit[], paid: Payout[], predicted: Map<string, bigint | null>): number {
  const values = new Set(paid.map((p) => p.value));
  return deposits.filter((d) => {
    const p = predicted.get(d.id);
    return p !== undefined && p !== null && values.has(p);
  }).length;
}
