import type { PrivacyPool } from '../privacyPool.ts';
import { poolContext } from './pool/context.ts';
import { deposit, minedDeposit } from './pool/deposit.ts';
import { fees } from './pool/fees.ts';
import type { PrivacyPoolsOptions } from './pool/options.ts';
import { ragequit } from './pool/ragequit.ts';
import { review, reviewMany } from './pool/review.ts';
import { unspent } from './pool/unspent.ts';
import { minedWithdrawal, withdraw } from './pool/withdraw.ts';

export { AspOutOfSyncError, PoolNoteSpentError } from './pool/errors.ts';
export type { PrivacyPoolsOptions } from './pool/options.ts';

/**
 * Privacy Pools (0xbow) on the hub chain, with the protocol's SDK for commitments, Merkle proofs and
 * Groth16 proofs. A route's note derives from the signer's master keys and its account index, so nothing
 * secret is stored. Deposits go through `Entrypoint.deposit` from the route's hub account; withdrawals are
 * relayed through `Entrypoint.relay` by the relayer's sending accounts in turn (its fee to the relayer), paying their recipient directly.
 *
 * src/providers/privacy-pools/pool/context.ts builds what the methods share (each asset's pool, the prover's slots,
 * the reviews' shared read of the ASP); the other files of src/providers/privacy-pools/pool/ are its actions, one each.
 */
export function createPrivacyPools(opts: PrivacyPoolsOptions): PrivacyPool {
  const ctx = poolContext(opts);
  return {
    chainId: ctx.chainId,
    fees: (asset) => fees(ctx, asset),
    deposit: (input) => deposit(ctx, input),
    minedDeposit: (input) => minedDeposit(ctx, input),
    review: (note) => review(ctx, note),
    reviewMany: (notes) => reviewMany(ctx, notes),
    withdraw: (input) => withdraw(ctx, input),
    minedWithdrawal: (input) => minedWithdrawal(ctx, input),
    ragequit: (input) => ragequit(ctx, input),
    unspent: (note, noteIndex) => unspent(ctx, note, noteIndex),
  };
}
