/**
 * The service's own gas per route, as the quotes charge it: the transactions the service signs and pays for on each
 * chain a route touches (top-ups of per-route accounts, approvals, the bridge-in, the pool deposit, the relayed
 * withdrawal, CCTP burns and the mints the service relays), each with a gas budget. A pure core: the live fee per
 * gas and the native currency's USD price come from outside (src/quote/networkCost.ts).
 *
 * A per-route account's transactions are paid by a top-up from the gas account (or, after the pool, the pool's
 * relayer): the route costs the top-up's whole value, since what the account does not spend stays there. The
 * transactions the service's own accounts send (the pool withdrawal, CCTP mints) cost their gas. The budgets are the
 * devnet's measured use (npm run bench:gas prints them side by side and flags a budget below what a step used) with
 * headroom: mints depend on storage that is warm or cold; the pool's withdrawal inserts a commitment into its LeanIMT,
 * a Poseidon hash per tree level, and the devnet's tree is shallow where a public pool's is deep.
 */

export type BridgeMode = 'relay' | 'cctp';

/** Where a step's transaction runs: the route's source chain, the hub, or the destination. */
export type ChainRole = 'source' | 'hub' | 'destination';

/** The service's accounts that pay gas: their balances run down with every route (docs/operations.md, "Hot wallets"). */
export type HotWallet = 'gas' | 'pool_relayer';

export interface StepGas {
  /** The txSender step without its per-route parts (stepKind). */
  step: string;
  chain: ChainRole;
  /**
   * What the service pays for it, in gas units at the chain's fee: for a top-up of a per-route account, the value it
   * sends (the account's transactions of that step spend it; what they leave stays in the account); for a
   * transaction the gas account or the pool's relayer sends itself, its gas budget. A per-route account's own
   * transactions are listed with 0: their top-up paid for them.
   */
  gas: number;
  /** Whose balance pays: the gas account (before the pool) or the pool's relayer (the withdrawal and after it). */
  payer: HotWallet;
  /**
   * Burn-and-mint: a leg within the hub chain is a plain transfer, not a burn and a mint. A route that starts on the hub
   * moves its deposit to the hub account by a transfer; one that ends there is paid by the withdrawal itself.
   */
  onlyWhen?: RouteShape;
}

/**
 * Gas units a per-route account must hold for its sends in one step: the gas limits of its largest step (the pool
 * deposit's approve, ~55,000, and the deposit itself, ~475,000 with the adapter's 30 % headroom over ~365,000 on the
 * devnet) with room for a deeper tree. Below it a top-up is sent, a round value between once and two and a half times
 * this at the fee of the moment (activities/gas.ts, topUpValue). It must cover the step on its own: an account that
 * holds a little less (dust anyone can send to the public hub account) gets no top-up.
 */
export const ROUTE_ACCOUNT_GAS_PER_STEP = 600_000n;
/** A top-up: its value (at most two and a half times the step's gas) and its own transfer. */
const TOP_UP = (5 * Number(ROUTE_ACCOUNT_GAS_PER_STEP)) / 2 + 21_000;
/** Paid from the step's top-up. */
const FROM_TOP_UP = 0;
const CCTP_MINT = 200_000;
/** Entrypoint.relay: a Groth16 verification, the change commitment inserted, the payout and the relay fee. */
const POOL_WITHDRAWAL = 850_000;

const POOL_STEPS: StepGas[] = [
  { step: 'shield:gas', payer: 'gas', chain: 'hub', gas: TOP_UP },
  { step: 'shield:approve', payer: 'gas', chain: 'hub', gas: FROM_TOP_UP },
  { step: 'shield', payer: 'gas', chain: 'hub', gas: FROM_TOP_UP },
  { step: 'unshield', payer: 'pool_relayer', chain: 'hub', gas: POOL_WITHDRAWAL },
];

export type RouteShape = 'source is not the hub' | 'source is the hub' | 'destination is not the hub';

export const STEP_GAS: Record<BridgeMode, StepGas[]> = {
  // Deposit-address mode: the deposit account sends the deposit to the bridge's address; the withdrawal pays the
  // bridge-out's deposit address directly, and the bridge's solver pays the destination's gas.
  relay: [
    { step: 'bridge-in:deposit:gas', payer: 'gas', chain: 'source', gas: TOP_UP },
    { step: 'bridge-in:deposit', payer: 'gas', chain: 'source', gas: FROM_TOP_UP },
    ...POOL_STEPS,
  ],
  cctp: [
    { step: 'bridge-in:gas', payer: 'gas', chain: 'source', gas: TOP_UP, onlyWhen: 'source is not the hub' },
    { step: 'bridge-in:approve', payer: 'gas', chain: 'source', gas: FROM_TOP_UP, onlyWhen: 'source is not the hub' },
    { step: 'bridge-in:burn', payer: 'gas', chain: 'source', gas: FROM_TOP_UP, onlyWhen: 'source is not the hub' },
    { step: 'bridge-in:mint', payer: 'gas', chain: 'hub', gas: CCTP_MINT, onlyWhen: 'source is not the hub' },
    { step: 'bridge-in:transfer:gas', payer: 'gas', chain: 'source', gas: TOP_UP, onlyWhen: 'source is the hub' },
    { step: 'bridge-in:transfer', payer: 'gas', chain: 'source', gas: FROM_TOP_UP, onlyWhen: 'source is the hub' },
    ...POOL_STEPS,
    { step: 'bridge-out:gas', payer: 'pool_relayer', chain: 'hub', gas: TOP_UP, onlyWhen: 'destination is not the hub' },
    { step: 'bridge-out:approve', payer: 'pool_relayer', chain: 'hub', gas: FROM_TOP_UP, onlyWhen: 'destination is not the hub' },
    { step: 'bridge-out:burn', payer: 'pool_relayer', chain: 'hub', gas: FROM_TOP_UP, onlyWhen: 'destination is not the hub' },
    { step: 'bridge-out:mint', payer: 'pool_relayer', chain: 'destination', gas: CCTP_MINT, onlyWhen: 'destination is not the hub' },
  ],
};

/** A txSender step without its per-route parts: `bridge-in:mint:0x…` → `bridge-in:mint`, `shield:gas:2` → `shield:gas`. */
export function stepKind(step: string): string {
  return step
    .split(':')
    .filter((part) => !/^(0x[0-9a-fA-F]+|\d+)$/.test(part))
    .join(':');
}

/** Whether a step runs on a route of this shape. */
function runsOn(onlyWhen: RouteShape | undefined, route: { sourceIsHub: boolean; destinationIsHub: boolean }): boolean {
  if (onlyWhen === 'source is not the hub') return !route.sourceIsHub;
  if (onlyWhen === 'source is the hub') return route.sourceIsHub;
  if (onlyWhen === 'destination is not the hub') return !route.destinationIsHub;
  return true;
}

/** Gas units of one route per chain role, of every payer or of `payer` only. */
export function routeGas(mode: BridgeMode, route: { sourceIsHub: boolean; destinationIsHub: boolean }, payer?: HotWallet): Record<ChainRole, bigint> {
  const total: Record<ChainRole, bigint> = { source: 0n, hub: 0n, destination: 0n };
  for (const step of STEP_GAS[mode]) {
    if (!runsOn(step.onlyWhen, route)) continue;
    if (payer && step.payer !== payer) continue;
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
 * then up to the next step of a 1-2-5 grid (…, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, … USD), returned as a decimal string
 * ("0.200000"). The grid is for privacy: for a route whose fee is its floor, the gas moves the payout, and a payout
 * must not encode the gas price of the minute it was quoted (docs/privacy.md, "The fee's gas"); fees that wander
 * within a step quote the same. Exact bigint math: wei × price / 10^18.
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
  micros = onGrid(micros);
  const whole = micros / MICRO_USD_PER_USD;
  const fraction = (micros % MICRO_USD_PER_USD).toString().padStart(6, '0');
  return `${whole}.${fraction}`;
}

/** The least value of the 1-2-5 grid (1, 2, 5, 10, 20, 50, … of any unit: micro-dollars, wei) at or above `value`; 0 stays 0. */
export function onGrid(value: bigint): bigint {
  if (value <= 0n) return 0n;
  for (let decade = 1n; ; decade *= 10n) {
    for (const step of [1n, 2n, 5n]) if (step * decade >= value) return step * decade;
  }
}

/** The largest value of the 1-2-5 grid at or below `value` (0 and below: 0). */
export function gridFloor(value: bigint): bigint {
  if (value <= 0n) return 0n;
  let best = 0n;
  for (let decade = 1n; decade <= value; decade *= 10n) for (const step of [1n, 2n, 5n]) if (step * decade <= value) best = step * decade;
  return best;
}
