/**
 * The service's own gas per route, as the quotes charge it: the transactions the service signs and pays for on each
 * chain a route touches (top-ups of per-route accounts, approvals, the bridge-in, the pool deposit, the relayed
 * withdrawal, CCTP burns and the mints the service relays), each with a gas budget. A pure core: the live fee per
 * gas and the native currency's USD price come from outside (src/quote/networkCost.ts).
 *
 * The budgets are the devnet's measured use (npm run bench:gas, which prints both side by side and flags a budget
 * below what a step used) with headroom: 30 % on token transfers, approvals, burns and mints, whose cost depends
 * on storage that is warm or cold; more on the pool's deposit and withdrawal, whose LeanIMT insertion costs a
 * Poseidon hash per tree level and the devnet's tree is shallow where a public pool's is deep.
 */

export type BridgeMode = 'relay' | 'cctp';

/** Where a step's transaction runs: the route's source chain, the hub, or the destination. */
export type ChainRole = 'source' | 'hub' | 'destination';

export interface StepGas {
  /** The txSender step without its per-route parts (stepKind). */
  step: string;
  chain: ChainRole;
  /** Gas units budgeted for it. */
  gas: number;
  /** Burn-and-mint: sent only when the destination is not the hub (the exit is then a burn and a mint, not a transfer). */
  onlyWhen?: 'destination is not the hub' | 'destination is the hub';
}

/** Native top-up of a per-route account: a plain value transfer. */
const TOP_UP = 21_000;
const TOKEN_TRANSFER = 65_000;
const APPROVE = 60_000;
const CCTP_BURN = 110_000;
const CCTP_MINT = 200_000;
/** Entrypoint.deposit: the vetting fee, the pool's transfer, one commitment inserted into the state tree. */
const POOL_DEPOSIT = 650_000;
/** Entrypoint.relay: a Groth16 verification, the change commitment inserted, the payout and the relay fee. */
const POOL_WITHDRAWAL = 850_000;

const POOL_STEPS: StepGas[] = [
  { step: 'shield:gas', chain: 'hub', gas: TOP_UP },
  { step: 'shield:approve', chain: 'hub', gas: APPROVE },
  { step: 'shield', chain: 'hub', gas: POOL_DEPOSIT },
  { step: 'unshield', chain: 'hub', gas: POOL_WITHDRAWAL },
];

export const STEP_GAS: Record<BridgeMode, StepGas[]> = {
  // Deposit-address mode: the deposit account sends the deposit to the bridge's address; the withdrawal pays the
  // bridge-out's deposit address directly, and the bridge's solver pays the destination's gas.
  relay: [{ step: 'bridge-in:deposit:gas', chain: 'source', gas: TOP_UP }, { step: 'bridge-in:deposit', chain: 'source', gas: TOKEN_TRANSFER }, ...POOL_STEPS],
  cctp: [
    { step: 'bridge-in:gas', chain: 'source', gas: TOP_UP },
    { step: 'bridge-in:approve', chain: 'source', gas: APPROVE },
    { step: 'bridge-in:burn', chain: 'source', gas: CCTP_BURN },
    { step: 'bridge-in:mint', chain: 'hub', gas: CCTP_MINT },
    ...POOL_STEPS,
    { step: 'bridge-out:gas', chain: 'hub', gas: TOP_UP, onlyWhen: 'destination is not the hub' },
    { step: 'bridge-out:approve', chain: 'hub', gas: APPROVE, onlyWhen: 'destination is not the hub' },
    { step: 'bridge-out:burn', chain: 'hub', gas: CCTP_BURN, onlyWhen: 'destination is not the hub' },
    { step: 'bridge-out:mint', chain: 'destination', gas: CCTP_MINT, onlyWhen: 'destination is not the hub' },
    { step: 'bridge-out:transfer:gas', chain: 'hub', gas: TOP_UP, onlyWhen: 'destination is the hub' },
    { step: 'bridge-out:transfer', chain: 'hub', gas: TOKEN_TRANSFER, onlyWhen: 'destination is the hub' },
  ],
};

/** A txSender step without its per-route parts: `bridge-in:mint:0x…` → `bridge-in:mint`, `shield:gas:2` → `shield:gas`. */
export function stepKind(step: string): string {
  return step
    .split(':')
    .filter((part) => !/^(0x[0-9a-fA-F]+|\d+)$/.test(part))
    .join(':');
}

/** Gas units of one route per chain role. */
export function routeGas(mode: BridgeMode, route: { destinationIsHub: boolean }): Record<ChainRole, bigint> {
  const total: Record<ChainRole, bigint> = { source: 0n, hub: 0n, destination: 0n };
  for (const step of STEP_GAS[mode]) {
    if (step.onlyWhen === 'destination is not the hub' && route.destinationIsHub) continue;
    if (step.onlyWhen === 'destination is the hub' && !route.destinationIsHub) continue;
    total[step.chain] += BigInt(step.gas);
  }
  return total;
}

export interface RouteChains {
  sourceChainId: number;
  hubChainId: number;
  destChainId: number;
}

/** What the service's own transactions of one route cost now (src/quote/networkCost.ts reads the live fees). */
export interface NetworkCosts {
  /** The USD cost, a decimal string with six decimals ("3.141593"). */
  routeCostUsd(route: RouteChains): Promise<string>;
}

/** No gas charged: for tests of the other fee rules. */
export const freeNetwork: NetworkCosts = { routeCostUsd: async () => '0' };

/** One chain's share: gas units, the fee per gas now (wei), the native currency's USD price (decimal string). */
export interface ChainGas {
  gas: bigint;
  feePerGas: bigint;
  nativeUsd: string;
}

const MICRO_USD_PER_USD = 1_000_000n;

/**
 * The USD cost of the gas, plus `bufferBps` for fees that rise while the route runs, rounded up to a micro-dollar and
 * returned as a decimal string ("3.141593"). Exact bigint math: wei × price / 10^18.
 */
export function gasCostUsd(chains: ChainGas[], bufferBps: number): string {
  let micros = 0n;
  for (const { gas, feePerGas, nativeUsd } of chains) {
    const [whole = '0', fraction = ''] = nativeUsd.split('.');
    const scale = 10n ** BigInt(fraction.length);
    const price = BigInt(whole) * scale + BigInt(fraction || '0');
    const numerator = gas * feePerGas * price * MICRO_USD_PER_USD * BigInt(10_000 + bufferBps);
    const denominator = 10n ** 18n * scale * 10_000n;
    micros += (numerator + denominator - 1n) / denominator;
  }
  const whole = micros / MICRO_USD_PER_USD;
  const fraction = (micros % MICRO_USD_PER_USD).toString().padStart(6, '0');
  return `${whole}.${fraction}`;
}
