import {
  calculateContext,
  generateMerkleProof,
  getCommitment,
  hashPrecommitment,
  type Hash,
  type Secret,
  type CommitmentProof,
  type WithdrawalProof,
} from '@0xbow/privacy-pools-core-sdk';
import { poseidon1 } from 'poseidon-lite';
import { encodeAbiParameters, encodeFunctionData, erc20Abi, getAbiItem, parseEventLogs, zeroAddress, type Address, type LocalAccount } from 'viem';
import type { ChainClients } from '../../chain/clients.ts';
import { receiptOrNull, TransactionRevertedError, type TxSender } from '../../chain/txSender.ts';
import type { PoolNote, PoolWithdrawal, PrivacyPool, WithdrawalAdmission, WithdrawalDestination } from '../privacyPool.ts';
import type { NoteReview } from '../../domain/observations.ts';
import { entrypointAbi, poolAbi, relayDataParameters } from './abi.ts';
import type { AspClient } from './asp.ts';
import { createTtlCache } from '../ttlCache.ts';
import type { Prover } from './prover.ts';
import type { NoteSecretsProvider } from '../../signer/signer.ts';
import { PrivateRouteError } from '../../errors.ts';

/** The protocol's circuits take Merkle paths of up to 32 levels; the SDK pads every path to that. */
const MAX_TREE_DEPTH = 32n;
/** Blocks per eth_getLogs request when scanning the pool's events. */
const LOG_RANGE = 10_000n;
/** Proofs made against an ASP root that the ASP replaced before they could be sent are made again, this often. */
const PROOF_ATTEMPTS = 5;
/** Recorded attempts of a deposit, a withdrawal or a ragequit per route (each reverted one moved nothing); then an operator looks. */
const SEND_ATTEMPTS = 10;
/** Deposits and withdrawals insert into the tree, whose cost grows when other inserts land first. */
const GAS_HEADROOM_PERCENT = 30;

const depositStep = (attempt: number) => (attempt === 1 ? 'shield' : `shield#${attempt}`);
const withdrawalStep = (attempt: number) => (attempt === 1 ? 'unshield' : `unshield#${attempt}`);
const ragequitStep = (attempt: number) => (attempt === 1 ? 'ragequit' : `ragequit#${attempt}`);

const leafInsertedEvent = getAbiItem({ abi: poolAbi, name: 'LeafInserted' });

/** How long the privacy checks of all waiting routes share one read of the ASP's approved leaves. */
const REVIEW_SHARE_MS = 2_000;

/** The pool will not let this note out: it was spent by a transaction this service has no record of. */
export class PoolNoteSpentError extends PrivateRouteError {
  override name = 'PoolNoteSpentError';
}

/** The ASP's published leaves do not match the root on chain yet; retry shortly. */
export class AspOutOfSyncError extends PrivateRouteError {
  override name = 'AspOutOfSyncError';
}

export interface PrivacyPoolsOptions {
  chainId: number;
  entrypoint: Address;
  /** Block of the pools' deployment (or earlier): event scans start here. */
  fromBlock: bigint;
  /** Relay fee charged on every withdrawal, paid to the relayer; at most each pool's maxRelayFeeBPS. */
  relayFeeBps: number;
  /** Submits every route's withdrawal (Entrypoint.relay) and receives the relay fees. */
  relayer: LocalAccount;
  /** Each note's nullifier and secret, asked of the signer (which keeps the master keys); never stored. */
  secrets: NoteSecretsProvider;
  clients: ChainClients;
  sender: TxSender;
  prover: Prover;
  /** The ASP's API client for a pool's scope (createAspClient in production). */
  asp: (scope: bigint) => AspClient;
}

/** One asset's pool as registered at the Entrypoint. */
interface AssetPool {
  address: Address;
  scope: bigint;
  asp: AspClient;
  stateTree: LeafScanner;
}

/**
 * Privacy Pools (0xbow) on the hub chain, with the protocol's SDK for commitments, Merkle proofs and
 * Groth16 proofs. A route's note derives from the signer's master keys and its account index, so nothing
 * secret is stored. Deposits go through `Entrypoint.deposit` from the route's hub account; withdrawals are
 * relayed through `Entrypoint.relay` by one relayer shared by all routes, paying their recipient directly.
 */
export function createPrivacyPools(opts: PrivacyPoolsOptions): PrivacyPool {
  const { chainId, entrypoint, sender, prover } = opts;
  const client = () => opts.clients.publicClient(chainId);
  const pools = new Map<string, () => Promise<AssetPool>>();
  // The trees are read when a proof can start, not when it is queued: a snapshot taken before waiting
  // behind other proofs would be stale (the ASP root replaced) by the time the proof is made. As many at once as
  // the prover proves, known once it has started (an `auto` prover that fell back to snarkjs proves one at a time).
  let limiter: ReturnType<typeof createLimiter> | undefined;
  const proofSlots = async <T>(task: () => Promise<T>): Promise<T> => {
    await prover.ready();
    limiter ??= createLimiter(prover.setup().concurrency);
    return limiter(task);
  };

  /** The asset's pool, read from the Entrypoint once (its fees are read again on every `fees` call). */
  function poolOf(asset: Address): Promise<AssetPool> {
    let get = pools.get(asset.toLowerCase());
    if (!get) {
      get = lazy(async () => {
        const config = await assetConfig(asset);
        const scope = await client().readContract({ address: config.pool, abi: poolAbi, functionName: 'SCOPE' });
        return { address: config.pool, scope, asp: opts.asp(scope), stateTree: createLeafScanner(opts, config.pool) };
      });
      pools.set(asset.toLowerCase(), get);
    }
    return get();
  }

  async function assetConfig(asset: Address) {
    const [pool, minimumDeposit, vettingFeeBps, maxRelayFeeBps] = await client().readContract({
      address: entrypoint,
      abi: entrypointAbi,
      functionName: 'assetConfig',
      args: [asset],
    });
    if (pool === zeroAddress) throw new Error(`no Privacy Pool is registered for ${asset} at the Entrypoint ${entrypoint}`);
    if (BigInt(opts.relayFeeBps) > maxRelayFeeBps)
      throw new Error(`PRIVACY_RELAY_FEE_BPS (${opts.relayFeeBps}) exceeds the pool's maximum relay fee of ${maxRelayFeeBps} bps`);
    return { pool, minimumDeposit, vettingFeeBps: Number(vettingFeeBps) };
  }

  const depositSecrets = async (pool: AssetPool, noteIndex: number) => {
    const { nullifier, secret } = await opts.secrets.depositSecrets(pool.scope, BigInt(noteIndex));
    return { nullifier: nullifier as Secret, secret: secret as Secret };
  };
  const nullifierHash = (nullifier: Secret) => poseidon1([nullifier]);

  async function blockTime(blockNumber: bigint): Promise<number> {
    return Number((await client().getBlock({ blockNumber })).timestamp);
  }

  async function isSpent(pool: AssetPool, hash: bigint): Promise<boolean> {
    return client().readContract({ address: pool.address, abi: poolAbi, functionName: 'nullifierHashes', args: [hash] });
  }

  const reviewedLabels = createTtlCache<{ labels: bigint[]; root: bigint }>({ ttlMs: REVIEW_SHARE_MS });

  async function reviewMany(notes: Array<Pick<PoolNote, 'asset' | 'label'>>): Promise<NoteReview[]> {
    const reviews = new Map<string, NoteReview>();
    for (const asset of new Set(notes.map((n) => n.asset.toLowerCase()))) {
      const pool = await poolOf(asset as Address);
      // Every waiting route asks: they share one read of the ASP's leaves for a moment (a withdrawal reads its own).
      const approved = await reviewedLabels
        .get(pool.address, () => approvedLabels(pool))
        .catch((error: unknown) => {
          if (error instanceof AspOutOfSyncError) return { labels: [] as bigint[], root: 0n };
          throw error;
        });
      const approvedSet = new Set(approved.labels);
      const labels = notes.filter((n) => n.asset.toLowerCase() === asset).map((n) => BigInt(n.label));
      const waiting = labels.filter((label) => !approvedSet.has(label));
      const statuses = waiting.length > 0 ? await pool.asp.reviewStatuses(waiting) : new Map<bigint, string>();
      for (const label of labels) {
        reviews.set(`${asset}:${label}`, approvedSet.has(label) ? 'approved' : statuses.get(label) === 'declined' ? 'rejected' : 'pending');
      }
    }
    return notes.map((n) => reviews.get(`${n.asset.toLowerCase()}:${BigInt(n.label)}`) ?? 'pending');
  }

  /** The ASP's approved labels, checked against the root withdrawals must prove against. */
  async function approvedLabels(pool: AssetPool): Promise<{ labels: bigint[]; root: bigint }> {
    const [{ aspLeaves }, root] = await Promise.all([
      pool.asp.leaves(),
      client()
        .readContract({ address: entrypoint, abi: entrypointAbi, functionName: 'latestRoot' })
        .catch(() => 0n),
    ]);
    if (aspLeaves.length === 0 || root === 0n) return { labels: [], root };
    const published = generateMerkleProof(aspLeaves, aspLeaves[0]!).root;
    if (published !== root) throw new AspOutOfSyncError(`the ASP's leaves (root ${published}) do not match the Entrypoint's latest root ${root} yet`);
    return { labels: aspLeaves, root };
  }

  /**
   * Proves the withdrawal and records its signed relay transaction under `step` (broadcast by txSender after the
   * record). Its destination is asked for only once the proof slot is taken, so a bridge order it names is fresh.
   */
  async function proveAndRecord(
    input: { routeId: string; note: PoolNote; noteIndex: number; destination: WithdrawalDestination; admit?: WithdrawalAdmission },
    step: string,
  ): Promise<void> {
    const pool = await poolOf(input.note.asset);
    const { nullifier, secret } = await depositSecrets(pool, input.noteIndex);
    const label = BigInt(input.note.label);
    const commitment = getCommitment(input.note.value, label, nullifier, secret);
    if (commitment.hash.toString() !== input.note.commitment) throw new Error(`the note of route ${input.routeId} does not derive from this signer's keys`);
    if (await isSpent(pool, nullifierHash(nullifier))) {
      throw new PoolNoteSpentError(
        `the pool note of route ${input.routeId} is already spent, by no transaction this service recorded; an operator must investigate`,
      );
    }

    const withdrawalTo = (recipient: Address) => ({
      processooor: entrypoint,
      data: encodeAbiParameters(relayDataParameters, [{ recipient, feeRecipient: opts.relayer.address, relayFeeBPS: BigInt(opts.relayFeeBps) }]),
    });
    const change = await opts.secrets.withdrawalSecrets(label, 0n);

    /** The trees as they are now. */
    const currentTrees = async () => {
      const [{ leaves }, approved] = await Promise.all([pool.stateTree.scan(), approvedLabels(pool)]);
      if (!approved.labels.includes(label)) throw new Error(`the deposit of route ${input.routeId} is not in the ASP's approved set`);
      return { leaves, approved };
    };
    /** The caller's admission of a withdrawal of `amount` against `trees`, before anything is proved against them. */
    const admit = async (trees: Awaited<ReturnType<typeof currentTrees>>, amount: bigint) => {
      const decimal = (values: bigint[]) => new Set(values.map((v) => v.toString()));
      await input.admit?.({ commitments: decimal(trees.leaves), approvedLabels: decimal(trees.approved.labels), leafCount: trees.leaves.length, amount });
      return trees;
    };

    /** Proves against `trees`; the pool accepts only the latest ASP root, so a proof against one replaced meanwhile is made again. */
    const proveAgainstLatestRoots = async (
      withdrawal: ReturnType<typeof withdrawalTo>,
      amount: bigint,
      first: Awaited<ReturnType<typeof currentTrees>>,
    ): Promise<WithdrawalProof> => {
      let trees = first;
      for (let attempt = 1; ; attempt++) {
        const { leaves, approved } = trees;
        const stateMerkleProof = generateMerkleProof(leaves, commitment.hash);
        const proof = await prover.proveWithdrawal(commitment, {
          context: BigInt(calculateContext(withdrawal, pool.scope as Hash)),
          withdrawalAmount: amount,
          stateMerkleProof,
          aspMerkleProof: generateMerkleProof(approved.labels, label),
          stateRoot: stateMerkleProof.root as Hash,
          stateTreeDepth: MAX_TREE_DEPTH,
          aspRoot: approved.root as Hash,
          aspTreeDepth: MAX_TREE_DEPTH,
          newNullifier: change.nullifier as Secret,
          newSecret: change.secret as Secret,
        });
        const latest = await client().readContract({ address: entrypoint, abi: entrypointAbi, functionName: 'latestRoot' });
        if (latest === approved.root) return proof;
        if (attempt >= PROOF_ATTEMPTS) throw new AspOutOfSyncError(`the ASP replaced its root during each of ${attempt} withdrawal proofs; retry later`);
        trees = await admit(await currentTrees(), amount);
      }
    };
    const { withdrawal, proof } = await proofSlots(async () => {
      // Admitted once before the destination is asked for (a bridge order is opened only for a withdrawal that can go
      // ahead), and again with the amount it takes.
      const trees = await admit(await currentTrees(), 0n);
      const { to, amount } = await input.destination();
      const withdrawal = withdrawalTo(to);
      return { withdrawal, proof: await proveAgainstLatestRoots(withdrawal, amount, await admit(trees, amount)) };
    });
    await sender.send({
      routeId: input.routeId,
      step,
      chainId,
      account: opts.relayer,
      to: entrypoint,
      data: encodeFunctionData({ abi: entrypointAbi, functionName: 'relay', args: [withdrawal, contractProof(proof, 8), pool.scope] }),
      gasHeadroomPercent: GAS_HEADROOM_PERCENT,
    });
  }

  /** The recorded attempt that was mined successfully, if any. Read only: an attempt that never reached the chain is not pushed out. */
  async function minedAttempt(routeId: string, stepOf: (attempt: number) => string): Promise<Awaited<ReturnType<TxSender['send']>> | null> {
    for (let attempt = 1; attempt <= SEND_ATTEMPTS; attempt++) {
      const intent = await sender.intent(routeId, stepOf(attempt));
      if (!intent) return null;
      // An RPC failure is thrown (the caller retries), never taken for "not mined".
      const receipt = await receiptOrNull(client(), intent.txHash);
      if (receipt?.status === 'success') return { txHash: intent.txHash, receipt };
    }
    return null;
  }

  async function describeDeposit(pool: AssetPool, asset: Address, sent: Awaited<ReturnType<TxSender['send']>>): Promise<PoolNote> {
    const [event] = parseEventLogs({ abi: poolAbi, eventName: 'Deposited', logs: sent.receipt.logs }).filter(
      (log) => log.address.toLowerCase() === pool.address.toLowerCase(),
    );
    if (!event) throw new Error('a deposit transaction emitted no Deposited event of the pool');
    return {
      asset,
      label: event.args._label.toString(),
      commitment: event.args._commitment.toString(),
      value: event.args._value,
      txHash: sent.txHash,
      blockNumber: sent.receipt.blockNumber,
      timestamp: await blockTime(sent.receipt.blockNumber),
    };
  }

  async function describeWithdrawal(_asset: Address, sent: Awaited<ReturnType<TxSender['send']>>): Promise<PoolWithdrawal> {
    const [event] = parseEventLogs({ abi: entrypointAbi, eventName: 'WithdrawalRelayed', logs: sent.receipt.logs });
    // Transaction hashes stay out of error texts: with the routeId beside them they would link the route's two sides in logs.
    if (!event) throw new Error('a withdrawal transaction emitted no WithdrawalRelayed event');
    return {
      txHash: sent.txHash,
      delivered: event.args._amount - event.args._feeAmount,
      fee: event.args._feeAmount,
      blockNumber: sent.receipt.blockNumber,
      timestamp: await blockTime(sent.receipt.blockNumber),
    };
  }

  return {
    chainId,

    async fees(asset) {
      const config = await assetConfig(asset);
      return { depositFeeBps: config.vettingFeeBps, withdrawalFeeBps: opts.relayFeeBps, minimumDeposit: config.minimumDeposit };
    },

    async deposit({ routeId, owner, asset, amount, noteIndex }) {
      const pool = await poolOf(asset);
      const { nullifier, secret } = await depositSecrets(pool, noteIndex);
      await sender.send({
        routeId,
        step: 'shield:approve',
        chainId,
        account: owner,
        to: asset,
        data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [entrypoint, amount] }),
      });
      // A reverted deposit moved nothing (and used none of the allowance): the next attempt is a new transaction.
      for (let attempt = 1; attempt <= SEND_ATTEMPTS; attempt++) {
        try {
          const sent = await sender.send({
            routeId,
            step: depositStep(attempt),
            chainId,
            account: owner,
            to: entrypoint,
            data: encodeFunctionData({ abi: entrypointAbi, functionName: 'deposit', args: [asset, amount, hashPrecommitment(nullifier, secret)] }),
            gasHeadroomPercent: GAS_HEADROOM_PERCENT,
          });
          return await describeDeposit(pool, asset, sent);
        } catch (error) {
          if (!(error instanceof TransactionRevertedError)) throw error;
        }
      }
      throw new Error(`the pool deposit of route ${routeId} reverted ${SEND_ATTEMPTS} times; an operator must look at the pool`);
    },

    async minedDeposit({ routeId, asset }) {
      const sent = await minedAttempt(routeId, depositStep);
      return sent && describeDeposit(await poolOf(asset), asset, sent);
    },

    async review(note) {
      const [review] = await reviewMany([note]);
      return review ?? 'pending';
    },

    reviewMany,

    async withdraw(input) {
      // Each attempt has its own write-ahead record: a relay that reverted (the ASP root moved between the
      // proof and its block) spent nothing, so the next attempt proves again against fresh roots.
      for (let attempt = 1; attempt <= SEND_ATTEMPTS; attempt++) {
        const step = withdrawalStep(attempt);
        try {
          if (!(await sender.intent(input.routeId, step))) await proveAndRecord(input, step);
          const sent = await sender.send({ routeId: input.routeId, step, chainId, account: opts.relayer, to: entrypoint });
          return await describeWithdrawal(input.note.asset, sent);
        } catch (error) {
          if (!(error instanceof TransactionRevertedError)) throw error;
        }
      }
      throw new Error(`the withdrawal of route ${input.routeId} reverted ${SEND_ATTEMPTS} times; an operator must look at the pool and the ASP`);
    },

    async minedWithdrawal({ routeId, asset }) {
      const sent = await minedAttempt(routeId, withdrawalStep);
      return sent && describeWithdrawal(asset, sent);
    },

    async ragequit({ routeId, owner, note, noteIndex }) {
      const pool = await poolOf(note.asset);
      const { nullifier, secret } = await depositSecrets(pool, noteIndex);
      // A reverted ragequit moved nothing: the next attempt looks at the note again and proves anew.
      for (let attempt = 1; attempt <= SEND_ATTEMPTS; attempt++) {
        const step = ragequitStep(attempt);
        if (!(await sender.intent(routeId, step))) {
          if (await isSpent(pool, nullifierHash(nullifier))) {
            // After a reverted attempt: a withdrawal spent the note first (the route's money is on its way out).
            if (attempt > 1) return null;
            throw new PoolNoteSpentError(`the pool note of route ${routeId} is already spent; nothing to ragequit`);
          }
          const proof = await prover.proveCommitment(note.value, BigInt(note.label), nullifier, secret);
          await sender.send({
            routeId,
            step,
            chainId,
            account: owner,
            to: pool.address,
            data: encodeFunctionData({ abi: poolAbi, functionName: 'ragequit', args: [contractProof(proof, 4)] }),
          });
        }
        try {
          const { txHash, receipt } = await sender.send({ routeId, step, chainId, account: owner, to: pool.address });
          const [event] = parseEventLogs({ abi: poolAbi, eventName: 'Ragequit', logs: receipt.logs });
          if (!event) throw new Error('a ragequit transaction emitted no Ragequit event');
          return { txHash, amount: event.args._value };
        } catch (error) {
          if (!(error instanceof TransactionRevertedError)) throw error;
        }
      }
      throw new Error(`the ragequit of route ${routeId} reverted ${SEND_ATTEMPTS} times; an operator must look at the pool`);
    },

    async unspent(note, noteIndex) {
      const pool = await poolOf(note.asset);
      const { nullifier } = await depositSecrets(pool, noteIndex);
      return (await isSpent(pool, nullifierHash(nullifier))) ? 0n : note.value;
    },
  };
}

/** A snarkjs proof in the verifier contract's layout (pB's coordinates swapped, as snarkjs's Solidity verifier expects). */
function contractProof(proof: WithdrawalProof | CommitmentProof, signals: 4 | 8) {
  const { pi_a, pi_b, pi_c } = proof.proof;
  const big = (values: readonly (string | number | bigint)[]) => values.map((v) => BigInt(v));
  if (proof.publicSignals.length !== signals) throw new Error(`expected ${signals} public signals, got ${proof.publicSignals.length}`);
  return {
    pA: big(pi_a.slice(0, 2)) as [bigint, bigint],
    pB: [big([pi_b[0]![1]!, pi_b[0]![0]!]), big([pi_b[1]![1]!, pi_b[1]![0]!])] as [[bigint, bigint], [bigint, bigint]],
    pC: big(pi_c.slice(0, 2)) as [bigint, bigint],
    pubSignals: big(proof.publicSignals) as never,
  };
}

/** A pool's events of one kind from `fromBlock` to `toBlock` (default: the head), in ranges the RPC accepts. */
async function scanLogs<E extends typeof leafInsertedEvent>(opts: PrivacyPoolsOptions, address: Address, event: E, fromBlock: bigint, toBlock?: bigint) {
  const client = opts.clients.publicClient(opts.chainId);
  const head = toBlock ?? (await client.getBlockNumber());
  const logs = [];
  for (let start = fromBlock; start <= head; start += LOG_RANGE) {
    const end = start + LOG_RANGE - 1n < head ? start + LOG_RANGE - 1n : head;
    logs.push(...(await client.getLogs({ address, event, fromBlock: start, toBlock: end })));
  }
  return logs;
}

interface LeafScanner {
  /**
   * Every commitment ever inserted into the pool's state tree, in order, and the block where each of its
   * roots was reached; concurrent callers share one scan.
   */
  scan(): Promise<{ leaves: bigint[] }>;
}

/**
 * A pool's state-tree leaves, scanned from its LeafInserted events once and then incrementally, and checked
 * against the root the pool reports at the same block.
 */
function createLeafScanner(opts: PrivacyPoolsOptions, address: Address): LeafScanner {
  const leaves: bigint[] = [];
  let scannedTo = opts.fromBlock - 1n;
  let scanning: Promise<{ leaves: bigint[] }> | null = null;

  async function scan() {
    const client = opts.clients.publicClient(opts.chainId);
    const head = await client.getBlockNumber();
    for (const log of await scanLogs(opts, address, leafInsertedEvent, scannedTo + 1n, head)) {
      leaves[Number(log.args._index!) - 1] = log.args._leaf!;
    }
    scannedTo = head;
    const root = await client.readContract({ address, abi: poolAbi, functionName: 'currentRoot', blockNumber: head });
    const complete = leaves.every((leaf) => leaf !== undefined) && Object.keys(leaves).length === leaves.length;
    if (!complete || (leaves.length > 0 && generateMerkleProof(leaves, leaves[0]!).root !== root)) {
      // A gap or a reorg: start over from the deployment block on the next call.
      leaves.length = 0;
      scannedTo = opts.fromBlock - 1n;
      throw new Error(`the pool's scanned leaves do not match its root ${root} at block ${head}; rescanning`);
    }
    return { leaves: [...leaves] };
  }

  return {
    scan() {
      scanning ??= scan().finally(() => {
        scanning = null;
      });
      return scanning;
    },
  };
}

/** Runs at most `slots` tasks at once; the others wait in order. */
function createLimiter(slots: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: Array<() => void> = [];
  return async (task) => {
    if (active >= slots) await new Promise<void>((resolve) => waiting.push(resolve));
    active++;
    try {
      return await task();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}

function lazy<T>(load: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | null = null;
  return () => {
    value ??= load().catch((error: unknown) => {
      value = null;
      throw error;
    });
    return value;
  };
}
