import { type Address, zeroAddress } from 'viem';
import type { RouteAccountRole, RouteAddresses } from '../../accounts/routeAccounts.ts';
import { isRouteAccount, type SignerAccount } from '../signer.ts';
import type { Call } from './calls.ts';

/**
 * The signer's spending policy as a pure function: a request and the facts the signer read for it (the route the
 * account or the payee belongs to, the contracts it may call) give a verdict. The rule table is in
 * docs/security.md; test/unit/signer-policy.test.ts runs every rule both ways.
 */

/** A route as the signer knows it: its own accounts derived by the signer itself, the rest read from the database. */
export interface RouteFacts {
  routeId: string;
  accountIndex: number;
  /** Derived by the signer from the index (a row cannot name an account that is not the route's). */
  own: RouteAddresses;
  /** Addresses the route's plan names: recipient, refund address, bridge orders' deposit addresses, operators' refund destinations. */
  payees: Address[];
  /** The most a single move of `token` may carry for this route: from its quote and its records; undefined when nothing is recorded in that token. */
  capOf(chainId: number, token: Address): bigint | undefined;
  /** The precommitments of the deposit note secrets the signer handed out for this route (its pool deposit must use one). */
  precommitments?: bigint[];
  /** The nullifier hashes of this route's deposit note under the pool scopes the signer has seen (its withdrawal spends one). */
  nullifierHashes?: bigint[];
}

/** The contracts the service calls, and the service's own two accounts. */
export interface PolicyContracts {
  /** Privacy Pools Entrypoints (approve spender, deposit, relay). */
  entrypoints: Address[];
  /** CCTP TokenMessengers (approve spender, depositForBurn). */
  tokenMessengers: Address[];
  /** CCTP MessageTransmitters (receiveMessage: anyone may mint a burn to its recipient). */
  messageTransmitters: Address[];
  gasAccount: Address;
  poolRelayer: Address;
  /** The chains the signer signs for (SIGNER_CHAIN_IDS); undefined: any. */
  chainIds?: number[];
  /** Where income sweeps go (SIGNER_INCOME_TREASURY); none: no sweep is relayed. */
  incomeTreasury?: Address;
  /** The largest native top-up the gas account or the relayer sends a route account in one transaction, per chain (wei). */
  topUpCap(chainId: number): bigint;
  /** The most one transaction may pay in fees (gas limit × its highest price per gas), per chain (wei). */
  txFeeCap(chainId: number): bigint;
}

export type Verdict = { allow: true; routeId?: string } | { allow: false; rule: RefusalRule; reason: string; routeId?: string };

export const REFUSAL_RULES = {
  'no-chain-id': 'the transaction names no chainId (replayable on every chain)',
  'chain-not-served': 'the transaction is for a chain the signer does not serve (SIGNER_CHAIN_IDS)',
  'unknown-route-account': 'the route account belongs to no recorded route',
  'call-not-allowed':
    'the role may not make this call (contract or function outside the allowlist, or native value from a route account other than the deposit account of a route of the native currency)',
  'payee-not-planned': "the recipient is not an address the route's plan names",
  'spender-not-allowed': 'the approval names a spender that is not an Entrypoint or a TokenMessenger',
  'contract-not-allowed': 'the call goes to a contract that is not the configured Entrypoint, TokenMessenger or MessageTransmitter',
  'above-cap': "the amount is above what the route's quote and records allow",
  'no-recorded-amount': 'the route has recorded no amount of this token, so nothing of it may move',
  'top-up-not-to-route-account': 'a native top-up goes to an address that is no route account',
  'top-up-above-cap': 'a native top-up is above SIGNER_TOP_UP_CAP_WEI',
  'relay-fee-recipient': "a withdrawal's relay fee goes to another account than the pool relayer",
  'sweep-not-a-change-note': 'an income sweep to the treasury spends no change note whose secrets the signer gave',
  'fee-above-cap': 'the transaction may pay more in fees than SIGNER_TX_FEE_CAP_WEI allows (gas limit × price per gas)',
  'burn-not-plain': 'a burn names a mint caller, or a mint recipient that is no EVM address',
  'precommitment-not-the-routes': "a pool deposit's precommitment is not the one of the note secrets the signer gave for the route",
  'withdrawal-not-the-routes': 'a withdrawal spends another note than the one of the route it pays',
  'rate-limited': "the role's signatures per minute are above SIGNER_RATE_LIMITS",
  'note-of-no-route': 'the note secrets asked for belong to no recorded route or pool note',
} as const;

export type RefusalRule = keyof typeof REFUSAL_RULES;

/** What the signer must look up before deciding: the route of a route account, or the route an address belongs to. */
export function factsNeeded(account: SignerAccount, call: Call): { index?: number; address?: Address } {
  if (isRouteAccount(account)) return { index: account.index };
  if (call.kind === 'native') return { address: call.to };
  if (call.kind === 'relay') return { address: call.recipient };
  return {};
}

const refuse = (rule: RefusalRule, reason: string, routeId?: string): Verdict => ({ allow: false, rule, reason, routeId });
const has = (list: readonly Address[], address: Address) => list.some((a) => a.toLowerCase() === address.toLowerCase());
const ownList = (route: RouteFacts) => Object.values(route.own) as Address[];

/**
 * The verdict on a transaction. `route`: for a route account, the route of its index; for the gas account and the
 * relayer, the route whose account or payee the transaction pays (undefined: none).
 */
export function decideTransaction(
  request: { account: SignerAccount; chainId: number | undefined; call: Call; maxFee: bigint },
  route: RouteFacts | undefined,
  contracts: PolicyContracts,
  /** For a relay to the income treasury: whether it spends a change note whose secrets the signer handed out. */
  sweep?: { spendsChangeNote: boolean },
): Verdict {
  const { account, chainId, call } = request;
  if (chainId === undefined) return refuse('no-chain-id', REFUSAL_RULES['no-chain-id']);
  if (contracts.chainIds && !contracts.chainIds.includes(chainId)) return refuse('chain-not-served', `chain ${chainId}: ${REFUSAL_RULES['chain-not-served']}`);
  // Fees are value too: a 0-value self-send offering a whole balance per gas pays it to the block's builder.
  const feeCap = contracts.txFeeCap(chainId);
  if (request.maxFee > feeCap) return refuse('fee-above-cap', `${request.maxFee} wei: ${REFUSAL_RULES['fee-above-cap']} (${feeCap})`, route?.routeId);
  if (call.kind === 'cancel') return { allow: true, routeId: route?.routeId };
  if (isRouteAccount(account)) return decideRouteAccount(account.role, chainId, call, route, contracts);
  return decideServiceAccount(account.role, chainId, call, route, contracts, sweep);
}

function decideRouteAccount(role: RouteAccountRole, chainId: number, call: Call, route: RouteFacts | undefined, contracts: PolicyContracts): Verdict {
  if (!route) return refuse('unknown-route-account', `${role} account: ${REFUSAL_RULES['unknown-route-account']}`);
  const { routeId } = route;
  const planned = (address: Address) => has(route.payees, address) || has(ownList(route), address);
  const capped = (token: Address, amount: bigint): Verdict => {
    const cap = route.capOf(chainId, token);
    if (cap === undefined) return refuse('no-recorded-amount', `${REFUSAL_RULES['no-recorded-amount']} (token ${token})`, routeId);
    if (amount > cap) return refuse('above-cap', `${amount} of ${token}: ${REFUSAL_RULES['above-cap']} (${cap})`, routeId);
    return { allow: true, routeId };
  };
  switch (call.kind) {
    case 'transfer':
      if (!planned(call.to)) return refuse('payee-not-planned', `transfer to ${call.to}: ${REFUSAL_RULES['payee-not-planned']}`, routeId);
      return capped(call.token, call.amount);
    case 'approve':
      if (!has([...contracts.entrypoints, ...contracts.tokenMessengers], call.spender))
        return refuse('spender-not-allowed', `approve ${call.spender}: ${REFUSAL_RULES['spender-not-allowed']}`, routeId);
      return capped(call.token, call.amount);
    case 'burn':
      if (!has(contracts.tokenMessengers, call.messenger))
        return refuse('contract-not-allowed', `depositForBurn on ${call.messenger}: ${REFUSAL_RULES['contract-not-allowed']}`, routeId);
      if (!call.mintRecipientPadded || !call.anyCaller) return refuse('burn-not-plain', REFUSAL_RULES['burn-not-plain'], routeId);
      if (!planned(call.mintRecipient)) return refuse('payee-not-planned', `burn to ${call.mintRecipient}: ${REFUSAL_RULES['payee-not-planned']}`, routeId);
      return capped(call.token, call.amount);
    case 'mint':
      return has(contracts.messageTransmitters, call.transmitter)
        ? { allow: true, routeId }
        : refuse('contract-not-allowed', `receiveMessage on ${call.transmitter}: ${REFUSAL_RULES['contract-not-allowed']}`, routeId);
    case 'poolDeposit':
      if (role !== 'hub') break;
      if (!has(contracts.entrypoints, call.entrypoint))
        return refuse('contract-not-allowed', `deposit on ${call.entrypoint}: ${REFUSAL_RULES['contract-not-allowed']}`, routeId);
      // A note whose secrets someone else chose is theirs to withdraw: only the route's own, derived by this signer.
      if (!route.precommitments?.includes(call.precommitment))
        return refuse('precommitment-not-the-routes', REFUSAL_RULES['precommitment-not-the-routes'], routeId);
      return capped(call.asset, call.amount);
    case 'ragequit':
      // A ragequit pays the note's depositor (this hub account) only; it moves nothing of the account's own.
      if (role === 'hub') return { allow: true, routeId };
      break;
    case 'native':
      // The deposit account of a native-currency route sends it as value (the bridge-in, a refund): to a payee, within
      // the route's cap of the native currency (Relay's zero address); a route of an ERC-20 has no such cap.
      if (role !== 'deposit') break;
      if (!planned(call.to)) return refuse('payee-not-planned', `${call.value} wei to ${call.to}: ${REFUSAL_RULES['payee-not-planned']}`, routeId);
      return capped(zeroAddress, call.value);
  }
  return refuse('call-not-allowed', `${role} account: ${REFUSAL_RULES['call-not-allowed']} (${describeCall(call)})`, routeId);
}

function decideServiceAccount(
  role: 'gas' | 'poolRelayer',
  chainId: number,
  call: Call,
  route: RouteFacts | undefined,
  contracts: PolicyContracts,
  sweep?: { spendsChangeNote: boolean },
): Verdict {
  switch (call.kind) {
    case 'native': {
      if (!route || !has(ownList(route), call.to))
        return refuse('top-up-not-to-route-account', `top-up to ${call.to}: ${REFUSAL_RULES['top-up-not-to-route-account']}`);
      const cap = contracts.topUpCap(chainId);
      if (call.value > cap) return refuse('top-up-above-cap', `top-up of ${call.value} wei: ${REFUSAL_RULES['top-up-above-cap']} (${cap})`, route.routeId);
      return { allow: true, routeId: route.routeId };
    }
    case 'mint':
      return has(contracts.messageTransmitters, call.transmitter)
        ? { allow: true }
        : refuse('contract-not-allowed', `receiveMessage on ${call.transmitter}: ${REFUSAL_RULES['contract-not-allowed']}`);
    case 'relay': {
      if (role !== 'poolRelayer') break;
      if (!has(contracts.entrypoints, call.entrypoint) || call.processooor.toLowerCase() !== call.entrypoint.toLowerCase())
        return refuse('contract-not-allowed', `relay on ${call.entrypoint}: ${REFUSAL_RULES['contract-not-allowed']}`);
      if (call.feeRecipient.toLowerCase() !== contracts.poolRelayer.toLowerCase())
        return refuse('relay-fee-recipient', `${REFUSAL_RULES['relay-fee-recipient']} (${call.feeRecipient})`, route?.routeId);
      // An income sweep: only to the treasury the signer was given, only of a change note it derived (src/income/).
      if (contracts.incomeTreasury && call.recipient.toLowerCase() === contracts.incomeTreasury.toLowerCase())
        return sweep?.spendsChangeNote ? { allow: true } : refuse('sweep-not-a-change-note', REFUSAL_RULES['sweep-not-a-change-note']);
      if (!route || !(has(route.payees, call.recipient) || has(ownList(route), call.recipient)))
        return refuse('payee-not-planned', `withdrawal to ${call.recipient}: ${REFUSAL_RULES['payee-not-planned']}`, route?.routeId);
      // Route A's note paying route B's recipient would move A's funds by B's plan.
      if (!route.nullifierHashes?.includes(call.nullifierHash))
        return refuse('withdrawal-not-the-routes', REFUSAL_RULES['withdrawal-not-the-routes'], route.routeId);
      return { allow: true, routeId: route.routeId };
    }
  }
  return refuse('call-not-allowed', `${role} account: ${REFUSAL_RULES['call-not-allowed']} (${describeCall(call)})`, route?.routeId);
}

/** The call as the audit log records it: what moves, where, how much (addresses and amounts are public on chain anyway). */
export function describeCall(call: Call): string {
  switch (call.kind) {
    case 'other':
      return `${call.selector ?? 'no calldata'} on ${call.to ?? 'a contract creation'}${call.value ? ` with ${call.value} wei` : ''}`;
    case 'native':
      return `${call.value} wei to ${call.to}`;
    case 'transfer':
      return `transfer ${call.amount} of ${call.token} to ${call.to}`;
    case 'approve':
      return `approve ${call.amount} of ${call.token} to ${call.spender}`;
    case 'burn':
      return `depositForBurn ${call.amount} of ${call.token} on ${call.messenger} to ${call.mintRecipient}`;
    case 'mint':
      return `receiveMessage on ${call.transmitter}`;
    case 'poolDeposit':
      return `deposit ${call.amount} of ${call.asset} on ${call.entrypoint}`;
    case 'relay':
      return `relay on ${call.entrypoint} to ${call.recipient}, fee to ${call.feeRecipient}`;
    case 'ragequit':
      return `ragequit on ${call.pool}`;
    case 'cancel':
      return 'cancel (0-value self-send)';
  }
}
