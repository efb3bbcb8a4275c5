/**
 * The harness: starts the real local stack on free ports with fresh state (as test/support/testStack.ts
 * does), plans each scenario's transfers, creates and funds them like distinct clients would (each its own
 * X-Forwarded-For behind TRUST_PROXY_HOPS=1), injects the ASP's rejection, waits for the transfers, and reads the
 * ground truth (Postgres ledger, GET of its own routes). The attacker never sees anything from here but the
 * public knowledge (publicKnowledge) and, for the routes of its own client, what their creator knows.
 */
import { sendAsNewUser } from '../../devnet/newSender.ts';
import { inArray } from 'drizzle-orm';
import httpServer from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPublicClient, erc20Abi, http, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { LocalStack } from '../../devnet/stack.ts';
import { ledgerEntries } from '../../src/db/schema.ts';
import { api, chainOf, clientKey, startBenchStack, type BenchStack } from '../support/stack.ts';
import type { PublicKnowledge } from './observe.ts';
import type { RouteTruth } from './score.ts';

export type Scenario = 'relay' | 'cross-asset' | 'asp' | 'cctp' | 'users' | 'analyst';
export const SCENARIOS: Scenario[] = ['relay', 'cross-asset', 'asp', 'cctp', 'users', 'analyst'];

export interface BenchOptions {
  scenario: Scenario;
  /** Bridge: deposit-address (Relay) or burn-and-mint (CCTP). */
  mode: 'relay' | 'cctp';
  /** Routes of one input amount, each from its own client. */
  shared: number;
  sharedAmount: string;
  /** Routes of distinct input amounts that land in one class (found through the quote), each from its own client. */
  classSize: number;
  classAmount: string;
  /** Routes of amounts in classes of their own. */
  distinct: number;
  /** Routes of the shared amount created by one client the attacker controls (it knows both of their ends). */
  sybil: number;
  /**
   * n − 1: routes of an amount of their own, each followed, once its note is in the pool, by minAnonymitySet − 1 routes
   * of the same amount from the attacker (one client, `burstClients: 'one'`, or each its own, 'distinct').
   */
  victims: number;
  burstClients: 'one' | 'distinct';
  /** Routes of an amount of their own that ask for more peers than they get: they leave at the longest wait. */
  maxWaitGroup: number;
  /** Dust poke: the attacker sends 0.10 USDC to each deposit address once its deposit went on to the bridge. */
  poke: boolean;
  /** REFUND_DELAY_MIN/MAX_SECONDS. */
  refundDelayMinSeconds: number;
  refundDelayMaxSeconds: number;
  /** cctp: routes of the shared amount paid on the hub (destChainId = hub). */
  hub: number;
  /** cross-asset: USDC → WETH routes of one input, created `crossSpacingSeconds` apart while the price walks. */
  cross: number;
  crossAmount: string;
  crossSpacingSeconds: number;
  /** asp: how many of the shared routes' deposits the ASP rejects (they are funded first). */
  rejected: number;
  /** Fail the rejected routes once the others are done, so their notes are ragequit. */
  ragequitRejected: boolean;
  /** users: distinct users per round (each its own client and funding wallet, one class), and rounds on one stack. */
  users: number;
  rounds: number;
  /** analyst: of the users, how many fund their route from its own recipient. */
  reuse: number;
  /** Per-route minAnonymitySet of the routes meant to leave together (distinct routes ask for 1). */
  minAnonymitySet: number;
  maxWaitSeconds: number;
  exitEpochSeconds: number;
  /**
   * The exit lottery (issue 32, docs/privacy.md "Timing"): PRIVACY_EXIT_MEAN_MIN/MAX_SECONDS, PRIVACY_EXIT_FLUSH_SECONDS,
   * PRIVACY_TRAFFIC_WINDOW_SECONDS; and the gate's PRIVACY_MIN_PEER_AGE_SECONDS.
   */
  exitMeanMinSeconds: number;
  exitMeanMaxSeconds: number;
  flushSeconds: number;
  trafficWindowSeconds: number;
  minPeerAgeSeconds: number;
  /** PUBLIC_STATUS_DELAY_MAX_SECONDS: the longest a route's end waits before its public view shows it. */
  publicDelaySeconds: number;
  /** PUBLIC_STATUS_HOLD_SECONDS: the least time from a route's funding to its end's showing publicly. */
  publicHoldSeconds: number;
  /** Longest random gap between two fundings. */
  gapMaxSeconds: number;
  timeoutSeconds: number;
  /** PRICE_EPOCH_SECONDS, DEVNET_PRICE_VOLATILITY_BPS, DEVNET_PRICE_STEP_SECONDS, DEVNET_PRICE_SEED. */
  priceEpochSeconds: number;
  volatilityBps: number;
  priceStepSeconds: number;
  priceSeed: string;
  /** The attacker's quote sampling interval (cross-asset). */
  sampleEverySeconds: number;
  /** Progress lines (stderr). */
  progress: (line: string) => void;
}

export type RunningBench = BenchStack;

export interface Planned {
  group: string;
  /** n − 1: the victim (its index) a burst route follows. */
  follows?: number;
  amount: string;
  /** X-Forwarded-For of its client. */
  client: string;
  dest: 'destination' | 'hub';
  destToken: 'USDC' | 'WETH';
  minAnonymitySet: number;
  attackerOwn: boolean;
  reject: boolean;
}

export interface Created extends Planned {
  routeId: string;
  /** Smallest units. */
  units: string;
  depositAddress: Address;
  /** The path of its webhook URL on the bench's receiver. */
  hookPath: string;
  createdAt: number;
  fundedAt: number | null;
  pokedAt: number | null;
}

const TERMINAL = new Set(['COMPLETED', 'FAILED']);
const VICTIM_AMOUNTS = ['88.8', '93.7', '57.25'];
const MAX_WAIT_AMOUNT = '133.3';
const DISTINCT_AMOUNTS = ['37.11', '52.3', '81.9', '23.45', '64.8', '118.6', '199.99', '29.7', '71.35', '163.4', '45.05', '250.5'];
const POLL_MS = 2000;
const PROGRESS_EVERY_MS = 15_000;
/** The Sybil client's address (all its routes); every other route has one of its own. */
const SYBIL_CLIENT = '10.0.250.250';

/** The stray scanner's interval on the bench's stack (production: 60 s). */
export const STRAY_SCAN_SECONDS = 5;
/** The dust poke: 0.10 USDC, REFUND_MIN_AMOUNT's default, so it is refunded. */
const POKE_UNITS = 100_000n;

/** The faucet is one account: its sends (fundings, bursts, pokes) go one at a time, or their nonces collide. */
let faucetQueue: Promise<unknown> = Promise.resolve();
function fromFaucet(send: Parameters<typeof sendAsNewUser>[0]): Promise<unknown> {
  const next = faucetQueue.then(() => sendAsNewUser(send));
  faucetQueue = next.catch(() => undefined);
  return next;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startBench(opts: BenchOptions): Promise<RunningBench> {
  return startBenchStack({
    pollIntervalMs: 200,
    env: {
      // Each simulated client sends its own X-Forwarded-For; the stack trusts one proxy hop.
      TRUST_PROXY_HOPS: '1',
      PRIVACY_EXIT_EPOCH_SECONDS: String(opts.exitEpochSeconds),
      PUBLIC_STATUS_DELAY_MAX_SECONDS: String(opts.publicDelaySeconds),
      PUBLIC_STATUS_HOLD_SECONDS: String(opts.publicHoldSeconds),
      // Routes ask for their own minimum at create (Planned.minAnonymitySet).
      PRIVACY_MIN_ANONYMITY_SET: '1',
      PRIVACY_MAX_ANONYMITY_SET: String(Math.max(50, opts.minAnonymitySet)),
      PRIVACY_MAX_WAIT_SECONDS: String(opts.maxWaitSeconds),
      PRIVACY_EXIT_MEAN_MIN_SECONDS: String(opts.exitMeanMinSeconds),
      PRIVACY_EXIT_MEAN_MAX_SECONDS: String(opts.exitMeanMaxSeconds),
      PRIVACY_EXIT_FLUSH_SECONDS: String(opts.flushSeconds),
      PRIVACY_TRAFFIC_WINDOW_SECONDS: String(opts.trafficWindowSeconds),
      PRIVACY_MIN_PEER_AGE_SECONDS: String(opts.minPeerAgeSeconds),
      REFUND_DELAY_MIN_SECONDS: String(opts.refundDelayMinSeconds),
      REFUND_DELAY_MAX_SECONDS: String(opts.refundDelayMaxSeconds),
      STRAY_SCAN_INTERVAL_SECONDS: String(STRAY_SCAN_SECONDS),
      PRICE_EPOCH_SECONDS: String(opts.priceEpochSeconds),
      DEVNET_PRICE_VOLATILITY_BPS: String(opts.volatilityBps),
      DEVNET_PRICE_STEP_SECONDS: String(opts.priceStepSeconds),
      DEVNET_PRICE_SEED: opts.priceSeed,
      ...(opts.mode === 'cctp' ? { BRIDGE_PROVIDER: 'cctp' } : {}),
    },
  });
}

/** What the attacker may know: RPC URLs, token and protocol addresses, the public API URLs, published parameters. No keys. */
export function publicKnowledge(stack: LocalStack, mode: 'relay' | 'cctp'): PublicKnowledge {
  const { manifest } = stack;
  return {
    apiUrl: stack.apiUrl,
    mode,
    chains: manifest.chains.map((c) => ({
      role: c.role,
      chainId: c.chainId,
      rpcUrl: c.rpcUrl,
      tokens: c.tokens.map((t) => ({ symbol: t.symbol, address: t.address.toLowerCase(), decimals: t.decimals })),
    })),
    entrypoint: manifest.privacyPools.entrypoint.toLowerCase(),
    pool: manifest.privacyPools.pool.toLowerCase(),
    poolScope: String(manifest.privacyPools.scope),
    aspUrl: stack.asp?.url ?? null,
    relayUrl: mode === 'relay' ? stack.relay.url : null,
    cctp:
      manifest.cctp?.chains.map((c) => ({
        chainId: c.chainId,
        domain: c.domain,
        tokenMessenger: c.tokenMessenger.toLowerCase(),
        messageTransmitter: c.messageTransmitter.toLowerCase(),
      })) ?? null,
    depositTimeoutSeconds: stack.config.DEPOSIT_TIMEOUT_SECONDS,
    exitEpochSeconds: stack.config.PRIVACY_EXIT_EPOCH_SECONDS,
    maxWaitSeconds: stack.config.PRIVACY_MAX_WAIT_SECONDS,
    minPeerAgeSeconds: stack.config.PRIVACY_MIN_PEER_AGE_SECONDS,
  };
}

interface QuoteView {
  quotedOutputAmount: string;
  amountClass?: { value: string; suggestions?: Array<{ amount: string; quotedOutputAmount: string }> };
}

async function quote(stack: LocalStack, amount: string, dest: 'destination' | 'hub' = 'destination', destToken = 'USDC'): Promise<QuoteView> {
  return api<QuoteView>(stack, 'POST', '/api/private-route/quote', {
    sourceChainId: chainOf(stack, 'source').chainId,
    destChainId: chainOf(stack, dest).chainId,
    amount,
    tokenSymbol: 'USDC',
    destTokenSymbol: destToken,
  });
}

const cents = (x: number) => Math.round(x * 100);
const human = (c: number) => (c / 100).toFixed(2);

/**
 * K distinct inputs that land in the class of `around` (the quote's own): between the smallest input that reaches
 * the class (a suggestion when rounding costs something) and the smallest that reaches the next class up, each
 * checked by its own quote. Without amount classes (an older service): K distinct inputs next to `around`.
 */
export async function classInputs(
  stack: LocalStack,
  around: string,
  k: number,
  dest: 'destination' | 'hub' = 'destination',
): Promise<{ inputs: string[]; classValue: string | null }> {
  const q = await quote(stack, around, dest);
  if (!q.amountClass) return { inputs: Array.from({ length: k }, (_, i) => human(cents(Number(around)) + 13 * i)), classValue: null };
  const own = BigInt(q.amountClass.value);
  const suggestions = q.amountClass.suggestions ?? [];
  const low = suggestions.find((s) => BigInt(s.quotedOutputAmount) === own)?.amount ?? around;
  const next = suggestions.filter((s) => BigInt(s.quotedOutputAmount) > own).sort((a, b) => Number(a.amount) - Number(b.amount))[0]?.amount;
  const from = Math.ceil(Number(low) * 100);
  const to = next ? Math.floor(Number(next) * 100) - 1 : from + Math.max(k, Math.round(from * 0.004));
  const inputs: string[] = [];
  // Evenly spread points first, then every cent, until K inputs quote the class.
  const tried = new Set<number>();
  const points = [
    ...Array.from({ length: k }, (_, i) => from + Math.floor(((to - from) * (i + 0.5)) / k)),
    ...Array.from({ length: to - from + 1 }, (_, i) => from + i),
  ];
  for (const c of points) {
    if (inputs.length >= k) break;
    if (tried.has(c) || c > to) continue;
    tried.add(c);
    const check = await quote(stack, human(c), dest);
    if (BigInt(check.quotedOutputAmount) === own) inputs.push(human(c));
  }
  return { inputs, classValue: own.toString() };
}

/** The scenario's transfers. */
export async function planRoutes(stack: LocalStack, opts: BenchOptions): Promise<{ planned: Planned[]; notes: string[] }> {
  const planned: Planned[] = [];
  const notes: string[] = [];
  let next = 1;
  const ownClient = () => {
    const n = next++;
    return `10.0.${Math.floor(n / 250)}.${(n % 250) + 1}`;
  };
  const add = (group: string, amount: string, extra: Partial<Planned> = {}) =>
    planned.push({
      group,
      amount,
      client: ownClient(),
      dest: 'destination',
      destToken: 'USDC',
      minAnonymitySet: opts.minAnonymitySet,
      attackerOwn: false,
      reject: false,
      ...extra,
    });

  if (opts.scenario === 'cross-asset') {
    for (let i = 0; i < opts.cross; i++) add('cross', opts.crossAmount, { destToken: 'WETH' });
    return { planned, notes };
  }
  for (let i = 0; i < opts.shared; i++) add('shared', opts.sharedAmount, { reject: opts.scenario === 'asp' && i < opts.rejected });
  for (let i = 0; i < opts.sybil; i++) add('sybil', opts.sharedAmount, { attackerOwn: true, client: SYBIL_CLIENT });
  if (opts.scenario === 'cctp') for (let i = 0; i < opts.hub; i++) add('hub', opts.sharedAmount, { dest: 'hub' });
  for (let v = 0; v < opts.victims; v++) {
    const amount = VICTIM_AMOUNTS[v] ?? `${91 + v}.25`;
    add('victim', amount);
    for (let i = 1; i < opts.minAnonymitySet; i++)
      add('burst', amount, { attackerOwn: true, follows: v, ...(opts.burstClients === 'one' ? { client: SYBIL_CLIENT } : {}) });
  }
  // More peers asked for than the group has: every route of it leaves at the longest wait.
  for (let i = 0; i < opts.maxWaitGroup; i++) add('maxwait', MAX_WAIT_AMOUNT, { minAnonymitySet: opts.maxWaitGroup + 2 });
  if (opts.classSize > 0) {
    const { inputs, classValue } = await classInputs(stack, opts.classAmount, opts.classSize);
    notes.push(
      classValue
        ? `class group: inputs ${inputs.join(', ')} USDC all quote the class ${classValue} (found through the quote's suggestions)`
        : `class group: the quote has no amount classes; inputs ${inputs.join(', ')} USDC (distinct payouts)`,
    );
    if (inputs.length < opts.classSize) notes.push(`class group: only ${inputs.length} of ${opts.classSize} inputs found in one class`);
    for (const amount of inputs) add('class', amount);
  }
  for (let i = 0; i < opts.distinct; i++) add('distinct', DISTINCT_AMOUNTS[i] ?? `${210 + 13 * i}.${(i * 37) % 100}`, { minAnonymitySet: 1 });
  return { planned, notes };
}

/**
 * The users scenario, one round: `opts.users` distinct users, each its own client address (a block of addresses per
 * round: new users each round) and, when funded, its own fresh sender; each sends one of `inputs` (close but different
 * amounts of one class, classInputs) and asks for `opts.minAnonymitySet`.
 */
export function planUsers(opts: BenchOptions, round: number, inputs: string[]): Planned[] {
  return Array.from({ length: opts.users }, (_, i) => ({
    group: 'users',
    amount: inputs[i % inputs.length]!,
    client: `10.${100 + round}.${Math.floor(i / 250)}.${(i % 250) + 1}`,
    dest: 'destination' as const,
    destToken: 'USDC' as const,
    minAnonymitySet: opts.minAnonymitySet,
    attackerOwn: false,
    reject: false,
  }));
}

let hooks = 0;
async function create(stack: LocalStack, p: Planned, hookBase: string): Promise<Created> {
  const hookPath = `/hook/${++hooks}`;
  const t = await api<{ routeId: string; amount: string; depositAddress: Address }>(
    stack,
    'POST',
    '/api/private-route',
    {
      sourceChainId: chainOf(stack, 'source').chainId,
      destChainId: chainOf(stack, p.dest).chainId,
      amount: p.amount,
      tokenSymbol: 'USDC',
      destTokenSymbol: p.destToken,
      userDestinationAddress: privateKeyToAccount(generatePrivateKey()).address,
      // A user's own refund wallet, not the recipient (the API refuses that): where strays are refunded.
      refundAddress: privateKeyToAccount(generatePrivateKey()).address,
      // One receiver per route: the worst case, a client with a single route (the observer sees each receiver apart).
      webhookUrl: `${hookBase}${hookPath}`,
      ...(p.minAnonymitySet > 1 ? { minAnonymitySet: p.minAnonymitySet } : {}),
    },
    { 'X-Forwarded-For': p.client, 'X-Api-Key': await clientKey(stack, p.client) },
  );
  return { ...p, routeId: t.routeId, units: t.amount, depositAddress: t.depositAddress, hookPath, createdAt: Date.now(), fundedAt: null, pokedAt: null };
}

function shuffled<T>(items: T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Funds a transfer as its user would: each from a new sender address (devnet/newSender.ts). */
function faucet(stack: LocalStack) {
  const source = chainOf(stack, 'source');
  const usdc = source.tokens.find((t) => t.symbol === 'USDC')!.address;
  return async (t: Created) => {
    await fromFaucet({
      rpcUrl: source.rpcUrl,
      faucetPrivateKey: stack.manifest.faucetPrivateKey,
      token: usdc,
      to: t.depositAddress,
      amount: BigInt(t.units),
    });
    t.fundedAt = Date.now();
  };
}

/**
 * Creates and funds the planned transfers as senders would. cross-asset: one every ~crossSpacingSeconds (±30 %),
 * each funded 0–gapMaxSeconds after it was created, so they are priced in different moments of the walk. asp: the
 * routes to reject are funded first, with the ASP's 'asp-review' fault set, and the others only once the ASP has
 * declined them. Otherwise: all created, then funded in a random order with random gaps; then the bursts that follow
 * victims into the pool (n − 1). Each route is pushed into `created` as it is created (the dust poker watches it).
 */
export async function createAndFund(stack: LocalStack, planned: Planned[], opts: BenchOptions, hookBase: string, created: Created[] = []): Promise<Created[]> {
  const fund = faucet(stack);
  const gap = () => sleep(Math.random() * opts.gapMaxSeconds * 1000);
  if (opts.scenario === 'cross-asset') {
    for (const [i, p] of planned.entries()) {
      if (i > 0) await sleep(opts.crossSpacingSeconds * 1000 * (0.7 + 0.6 * Math.random()));
      const t = await create(stack, p, hookBase);
      created.push(t);
      await gap();
      await fund(t);
      opts.progress(`created and funded cross-asset route ${i + 1}/${planned.length}`);
    }
    return created;
  }
  for (const p of planned.filter((x) => x.group !== 'burst')) created.push(await create(stack, p, hookBase));
  opts.progress(`created ${created.length} transfers`);
  const rejected = created.filter((t) => t.reject);
  if (rejected.length > 0) {
    stack.relay.faults.set({ operation: 'asp-review', mode: 'reject', count: rejected.length });
    for (const t of rejected) await fund(t);
    const deadline = Date.now() + 180_000;
    while (stack.relay.faults.list().some((f) => f.operation === 'asp-review')) {
      if (Date.now() > deadline) throw new Error('the ASP did not review the deposits to reject within 180 s');
      await sleep(500);
    }
    opts.progress(`the ASP declined ${rejected.length} deposit(s); funding the others`);
  }
  for (const [i, t] of shuffled(created.filter((c) => !c.reject)).entries()) {
    if (i > 0) await gap();
    await fund(t);
  }
  opts.progress(`funded ${created.length} deposit addresses`);
  // n − 1: once a victim's note is in the pool (the attacker sees its deposit on the hub), the burst that would complete
  // its set: created at once, funded at once.
  const victims = created.filter((t) => t.group === 'victim');
  for (const [v, victim] of victims.entries()) {
    await waitForStatus(stack, victim, IN_POOL, 300_000);
    const burst: Created[] = [];
    for (const p of planned.filter((x) => x.group === 'burst' && x.follows === v)) burst.push(await create(stack, p, hookBase));
    await Promise.all(burst.map(fund));
    created.push(...burst);
    opts.progress(
      `victim ${victim.routeId} is in the pool: created and funded ${burst.length} routes of its amount (${opts.burstClients === 'one' ? 'one client' : 'distinct clients'})`,
    );
  }
  return created;
}

const IN_POOL = new Set(['SHIELDED', 'UNSHIELD_SENT', 'BRIDGING_OUT', 'COMPLETED']);
/** Past the bridge-in: the deposit address has sent the deposit on (statuses before the end). */
const BRIDGED = new Set(['RECEIVED_ON_HUB', 'SHIELDED', 'UNSHIELD_SENT', 'BRIDGING_OUT']);

async function waitForStatus(stack: LocalStack, t: Created, statuses: Set<string>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const view = await api<{ status: string }>(stack, 'GET', `/api/private-route/${t.routeId}`);
    if (statuses.has(view.status)) return;
    if (Date.now() > deadline) throw new Error(`${t.routeId} did not reach ${[...statuses].join('/')} within ${timeoutMs / 1000} s (${view.status})`);
    await sleep(1000);
  }
}

/**
 * The dust poke: the attacker sends 0.10 USDC (from a new address of its own) to each deposit address once the route
 * sent its deposit on to the bridge (public: the bridge's request names it), while the route is still in flight. A stray
 * is refunded to the route's refundAddress; the refund's moment is what the attacker watches. Returns a stop function.
 */
export function startDustPoker(stack: LocalStack, created: Created[], opts: BenchOptions): () => Promise<void> {
  const source = chainOf(stack, 'source');
  const usdc = source.tokens.find((t) => t.symbol === 'USDC')!.address;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      for (const t of created.filter((c) => c.pokedAt === null && c.fundedAt !== null)) {
        const view = await api<{ status: string }>(stack, 'GET', `/api/private-route/${t.routeId}`);
        if (!BRIDGED.has(view.status)) continue;
        await fromFaucet({ rpcUrl: source.rpcUrl, faucetPrivateKey: stack.manifest.faucetPrivateKey, token: usdc, to: t.depositAddress, amount: POKE_UNITS });
        t.pokedAt = Date.now();
        opts.progress(`poked ${t.depositAddress} (${t.routeId}, ${view.status}) with 0.10 USDC`);
      }
      await sleep(1000);
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}

/** Waits until every poked deposit address is empty again (its stray refunded), or `timeoutMs`; returns how many are. */
export async function awaitDustRefunds(stack: LocalStack, created: Created[], timeoutMs: number): Promise<number> {
  const source = chainOf(stack, 'source');
  const usdc = source.tokens.find((t) => t.symbol === 'USDC')!.address;
  const client = createPublicClient({ transport: http(source.rpcUrl) });
  const poked = created.filter((t) => t.pokedAt !== null);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const balances = await Promise.all(
      poked.map((t) => client.readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [t.depositAddress] })),
    );
    const empty = balances.filter((b) => b === 0n).length;
    if (empty === poked.length || Date.now() > deadline) return empty;
    await sleep(2000);
  }
}

/** Arrival times (ms) of deliveries per receiver path. */
export type HookArrivals = Map<string, number[]>;

/**
 * The webhook receivers (one path per route) and what an observer of their traffic sees: when each delivery arrived,
 * not what it said (TLS hides the body in production).
 */
export async function startHookReceiver(): Promise<{ base: string; arrivals: HookArrivals; close(): Promise<void> }> {
  const arrivals: HookArrivals = new Map();
  const server = httpServer.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const path = new URL(request.url ?? '/', 'http://x').pathname;
      arrivals.set(path, [...(arrivals.get(path) ?? []), Date.now()]);
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrivals,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface TransferView {
  status: string;
  error: string | null;
  needsAttention?: boolean;
  payoutTxHash?: string | null;
  amountClass?: { value: string } | null;
  privacy: { anonymitySet: number; waitedSeconds: number; leftAtMaxWait?: boolean } | null;
}

/**
 * Polls GET of the harness's own routes until all are terminal (a route whose deposit the ASP rejected: parked, then,
 * with ragequitRejected once the others are terminal, failed by the operator's `fail` so its note is ragequit) or the
 * timeout passes; returns the last views.
 */
export async function awaitTransfers(
  stack: LocalStack,
  created: Array<Pick<Created, 'routeId' | 'reject'>>,
  opts: BenchOptions,
): Promise<Map<string, TransferView>> {
  const deadline = Date.now() + opts.timeoutSeconds * 1000;
  const started = Date.now();
  let lastProgress = 0;
  let views = new Map<string, TransferView>();
  const failed = new Set<string>();
  for (;;) {
    views = new Map(
      await Promise.all(created.map(async (t) => [t.routeId, await api<TransferView>(stack, 'GET', `/api/private-route/${t.routeId}`)] as const)),
    );
    const parked = (t: Pick<Created, 'routeId' | 'reject'>) => t.reject && !!views.get(t.routeId)?.needsAttention;
    const othersDone = created.every((t) => t.reject || TERMINAL.has(views.get(t.routeId)!.status));
    if (othersDone && opts.ragequitRejected) {
      for (const t of created.filter((c) => parked(c) && !failed.has(c.routeId))) {
        await stack.temporal.client.workflow.getHandle(t.routeId).executeUpdate('fail', { args: [{ reason: 'bench: the ASP rejected the deposit' }] });
        failed.add(t.routeId);
        opts.progress(`failed ${t.routeId} (ASP rejected): its note is ragequit`);
      }
    }
    const done = created.filter((t) => TERMINAL.has(views.get(t.routeId)!.status) || (!opts.ragequitRejected && parked(t))).length;
    if (Date.now() - lastProgress >= PROGRESS_EVERY_MS || done === created.length) {
      const counts = new Map<string, number>();
      for (const v of views.values()) counts.set(v.status, (counts.get(v.status) ?? 0) + 1);
      opts.progress(`${Math.round((Date.now() - started) / 1000)} s: ${[...counts].map(([s, n]) => `${s} ${n}`).join(', ')}`);
      lastProgress = Date.now();
    }
    if (done === created.length || Date.now() > deadline) return views;
    await sleep(POLL_MS);
  }
}

/** When a holder of routeIds (no statusToken) first saw each status of each route: routeId → status → ms. */
export type PublicSightings = Map<string, Map<string, number>>;

/**
 * An observer holding the routeIds but not their statusTokens (a leaked link, a log line): it reads the public view of
 * every route every `everyMs` and notes when it first saw each status. Returns a stop function that gives what it saw.
 */
export function watchPublicViews(
  stack: LocalStack,
  created: Array<Pick<Created, 'routeId'>>,
  everyMs = 500,
): (waitForEndsMs: number) => Promise<PublicSightings> {
  const seen: PublicSightings = new Map(created.map((t) => [t.routeId, new Map<string, number>()]));
  let stopAt = Number.POSITIVE_INFINITY;
  const ended = () => [...seen.values()].every((s) => s.has('COMPLETED') || s.has('FAILED'));
  const loop = (async () => {
    while (Date.now() < stopAt && !(stopAt < Number.POSITIVE_INFINITY && ended())) {
      await Promise.all(
        created.map(async (t) => {
          // A plain fetch: the bench's api() sends the statusToken it remembers from the create (bench/support/stack.ts).
          const view = await fetch(`${stack.apiUrl}/api/private-route/${t.routeId}`, { signal: AbortSignal.timeout(10_000) })
            .then((r) => r.json() as Promise<{ data?: { status: string } }>)
            .then((body) => body.data ?? null)
            .catch(() => null);
          const statuses = seen.get(t.routeId)!;
          if (view && !statuses.has(view.status)) statuses.set(view.status, Date.now());
        }),
      );
      await sleep(everyMs);
    }
  })();
  // Stops once every public view showed its end (it shows a delay after the end itself), or `waitForEndsMs` from now.
  return async (waitForEndsMs) => {
    stopAt = Date.now() + waitForEndsMs;
    await loop;
    return seen;
  };
}

/** Ground truth per route: the ledger's pool transactions, GET's payout, privacy report and class. */
export async function groundTruth(stack: LocalStack, created: Created[], views: Map<string, TransferView>): Promise<RouteTruth[]> {
  const rows = await stack.service.db
    .select()
    .from(ledgerEntries)
    .where(
      inArray(
        ledgerEntries.routeId,
        created.map((t) => t.routeId),
      ),
    );
  const tx = (routeId: string, kind: string) => rows.find((r) => r.routeId === routeId && r.kind === kind)?.txHash?.toLowerCase() ?? null;
  return created.map((t) => {
    const view = views.get(t.routeId);
    return {
      routeId: t.routeId,
      group: t.group,
      amount: t.amount,
      client: t.client,
      attackerOwn: t.attackerOwn,
      rejected: t.reject,
      status: view?.status ?? 'UNKNOWN',
      needsAttention: view?.needsAttention ?? false,
      depositAddress: t.depositAddress.toLowerCase(),
      fillTx: tx(t.routeId, 'arrived_on_hub'),
      shieldTx: tx(t.routeId, 'shielded'),
      unshieldTx: tx(t.routeId, 'unshielded'),
      payoutTx: view?.payoutTxHash?.toLowerCase() ?? tx(t.routeId, 'paid'),
      anonymitySet: view?.privacy?.anonymitySet ?? null,
      leftAtMaxWait: view?.privacy?.leftAtMaxWait ?? null,
      waitedSeconds: view?.privacy?.waitedSeconds ?? null,
      classValue: view?.amountClass?.value ?? null,
      createdAt: t.createdAt,
      fundedAt: t.fundedAt,
    };
  });
}
