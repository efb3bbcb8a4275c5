import type { FaultRegistry } from '../faults.ts';
import { pollingLoop, type PollingLoop } from '../pollingLoop.ts';
import type { AspChain, PoolEvent } from './onchain.ts';
import type { AspState, AspStore } from './store.ts';
import { leanImtRoot, placeholderCid } from './tree.ts';

/** Blocks per eth_getLogs call, so a long-running chain is caught up in steps. */
const MAX_BLOCKS_PER_SCAN = 5_000;

export type Reviewer = PollingLoop;

/**
 * The emulated ASP: one loop that follows the pool's deposits and state-tree leaves, reviews each deposit
 * approvalDelayMs after it saw it (approved unless an 'asp-review' fault declines it), and publishes the
 * root of the approved labels on chain with Entrypoint.updateRoot. Like the real ASP it reviews in rounds,
 * at most one every reviewIntervalMs: every new root invalidates the withdrawal proofs being built against
 * the previous one, so a root per deposit would starve withdrawals while deposits keep coming.
 * A failed iteration is logged and the work is picked up again on the next one.
 */
export function createReviewer(deps: {
  store: AspStore;
  chain: AspChain;
  faults: FaultRegistry;
  deployBlock: number;
  approvalDelayMs: number;
  reviewIntervalMs: number;
  pollIntervalMs: number;
  log: (obj: object) => void;
}): Reviewer {
  const { store, chain, faults, log } = deps;
  let lastReview = 0;

  async function scan(): Promise<void> {
    const head = await chain.head();
    const fromBlock = store.state.scanned ? store.state.scanned.block + 1 : deps.deployBlock;
    if (head.number < fromBlock) return;
    const toBlock = Math.min(head.number, fromBlock + MAX_BLOCKS_PER_SCAN - 1);
    const events = await chain.poolEvents(fromBlock, toBlock);
    const hash = toBlock === head.number ? head.hash : await chain.blockHash(toBlock);
    if (!hash) throw new Error(`block ${toBlock} vanished while scanning`);
    const seenAt = Date.now();
    store.update((state) => {
      for (const event of events) apply(state, event, seenAt);
      state.scanned = { block: toBlock, hash };
    });
  }

  function apply(state: AspState, event: PoolEvent, seenAt: number): void {
    if (event.kind === 'leaf') {
      state.stateTreeLeaves[event.index] = event.leaf;
      return;
    }
    if (store.depositByLabel(event.label)) return;
    const { kind: _, ...deposit } = event;
    state.deposits.push({ ...deposit, seenAt, reviewStatus: 'pending' });
    log({ event: 'asp.deposit_seen', label: event.label.toString(), txHash: event.txHash });
  }

  /** Reviews the deposits that are due and, if any was approved, computes the new root (mtRoot). */
  function review(now: number): void {
    if (now - lastReview < deps.reviewIntervalMs) return;
    const due = store.state.deposits.filter((d) => d.reviewStatus === 'pending' && now >= d.seenAt + deps.approvalDelayMs);
    if (due.length === 0) return;
    lastReview = now;
    store.update((state) => {
      for (const deposit of due) {
        const declined = faults.take('asp-review', 'reject') !== null;
        deposit.reviewStatus = declined ? 'declined' : 'approved';
        if (!declined) state.aspLeaves.push(deposit.label);
        log({ event: `asp.deposit_${deposit.reviewStatus}`, label: deposit.label.toString() });
      }
      const root = leanImtRoot(state.aspLeaves);
      if (root !== 0n && root !== state.mtRoot?.root) state.mtRoot = { root, createdAt: now };
    });
  }

  async function syncOnchainRoot(): Promise<bigint | null> {
    const onchain = await chain.latestRoot();
    if (onchain !== store.state.onchainMtRoot) store.update((state) => (state.onchainMtRoot = onchain));
    return onchain;
  }

  /** Posts the root with updateRoot from the postman account and waits until it is mined. */
  async function publish(root: bigint): Promise<void> {
    const cid = placeholderCid(store.state.aspLeaves);
    const txHash = await chain.updateRoot(root, cid);
    const onchain = await syncOnchainRoot();
    log({ event: 'asp.root_published', root: root.toString(), cid, txHash, latestRoot: onchain?.toString() ?? null });
  }

  async function iterate(): Promise<void> {
    await scan();
    review(Date.now());
    // Read first: a root mined just before a restart must not be posted twice.
    const onchain = await syncOnchainRoot();
    const target = store.state.mtRoot;
    if (target && target.root !== onchain) await publish(target.root);
  }

  return pollingLoop(iterate, deps.pollIntervalMs, (error) => log({ event: 'asp.error', error }));
}
