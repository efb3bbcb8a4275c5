/**
 * The attacker's whole run (bench/linkability, design §4b): public data in (observe.ts), guesses out (attacks.ts,
 * posterior.ts). Shared by the scenarios of run.ts and the many-users rounds of users.ts; nothing here reads the
 * database or GET of a route the attacker did not create.
 */
import { formatUnits } from 'viem';
import {
  aspPrefixes,
  aspRootsOnChain,
  cctpBurns,
  cctpEntries,
  cctpExits,
  cctpMints,
  classifyExits,
  classFifoMatch,
  type Destination,
  type Entry,
  endToEndOf,
  epochsSeen,
  type Exit,
  fingerprintCandidates,
  fingerprintClasses,
  fingerprintMatch,
  gasFundingLinks,
  hubFills,
  identifierLinks,
  insideProofRoot,
  type Item,
  type Payout,
  payouts,
  poolDeposits,
  poolWithdrawals,
  quotedClasses,
  quotePredictable,
  ragequitLabels,
  rankFifoMatch,
  relayEntries,
  relayExits,
  sourceDeposits,
  stateRootLinks,
  withdrawalCandidates,
  gateTimingCandidates,
  labelApprovalTimes,
  depositRefunds,
} from './attacks.ts';
import {
  bridgePricesMove,
  chainIdOf,
  destinationKey,
  type PublicKnowledge,
  type PublicView,
  type QuoteDestination,
  type QuoteSample,
  quoteInversions,
} from './observe.ts';
import { matchingPosterior } from './posterior.ts';

export interface AttackInput {
  /** cross-asset: the attacker's samples of the quote of `input` (human) to WETH while transfers were created. */
  samples: QuoteSample[] | null;
  sampledInput: string | null;
  /** The attacker's own routes: what their creator knows (deposit address, payout transaction). */
  own: Array<{ depositAddress: string; payoutTx: string | null }>;
}

/** The attacker's whole run: public data in, guesses out. */
export async function attack(known: PublicKnowledge, view: PublicView, input: AttackInput) {
  const { source, hub, destination } = view.chains;
  const token = (role: 'source' | 'hub' | 'destination', symbol: string) => known.chains.find((c) => c.role === role)!.tokens.find((t) => t.symbol === symbol);
  const usdc = (role: 'source' | 'hub' | 'destination') => token(role, 'USDC')!;
  const asItems = (chain: typeof hub, items: Item[]) => items.map((i) => ({ id: i.id, chain, txHashes: i.txHashes }));
  const human = (units: bigint) => formatUnits(units, usdc('source').decimals);

  const deposits = poolDeposits(hub, known.entrypoint, known.pool);
  const withdrawals = poolWithdrawals(hub, known.entrypoint, known.pool);
  const fills = hubFills(hub, usdc('hub').address, deposits);
  // The bridges' public records name what they received on the source chain: Relay's requests, CCTP's burns.
  const bridgeSends =
    known.mode === 'cctp'
      ? new Set(cctpBurns(source, known.cctp!.find((c) => c.chainId === source.chainId)!.tokenMessenger).map((b) => b.txHash))
      : view.relayRequests
        ? new Set(view.relayRequests.flatMap((r) => r.inTxs.map((t) => t.hash)))
        : null;
  const entered = sourceDeposits(source, usdc('source').address, bridgeSends);

  // The bridges are public: trace each pool deposit back to its source deposit, each withdrawal on to its payout.
  let entries: Entry[];
  let exits: Exit[];
  let paid: Payout[];
  const destinations: QuoteDestination[] = [{ role: 'destination', tokenSymbol: 'USDC' }];
  if (known.mode === 'cctp') {
    const contracts = (chainId: number) => known.cctp!.find((c) => c.chainId === chainId)!;
    const sourceBurns = cctpBurns(source, contracts(source.chainId).tokenMessenger);
    const hubBurns = cctpBurns(hub, contracts(hub.chainId).tokenMessenger);
    const hubMints = cctpMints(hub, contracts(hub.chainId).messageTransmitter, usdc('hub').address);
    const destMints = cctpMints(destination, contracts(destination.chainId).messageTransmitter, usdc('destination').address);
    entries = cctpEntries(hubMints, deposits, entered, sourceBurns);
    exits = cctpExits(hub, usdc('hub').address, withdrawals, hubBurns, destMints, new Map([[destination.chainId, usdc('destination').address]]));
    paid = exits.flatMap((x) => (x.payout ? [x.payout] : []));
    destinations.push({ role: 'hub', tokenSymbol: 'USDC' });
  } else {
    const weth = token('destination', 'WETH');
    paid = [...payouts(destination, usdc('destination').address), ...(weth ? payouts(destination, weth.address) : [])];
    entries = relayEntries(hub, usdc('hub').address, deposits, entered, view.relayRequests);
    exits = relayExits(withdrawals, paid, view.relayRequests);
    if (weth) destinations.push({ role: 'destination', tokenSymbol: 'WETH' });
  }
  const payoutChain = (p: Payout) => (p.chainId === hub.chainId ? hub : destination);

  // Quote inversion: the class each source deposit's exact value quotes, for every destination it might go to.
  const dests: Destination[] = destinations.map((d) => ({
    key: destinationKey(d),
    chainId: chainIdOf(known, d.role),
    token: token(d.role, d.tokenSymbol)!.address,
  }));
  const quotes = await quoteInversions(
    known,
    entries.flatMap((e) => (e.source ? [human(e.source.value)] : [])),
    destinations,
  );
  const classes = quotedClasses(entries, quotes, dests, human);
  const gridded = [...quotes.values()].some((answers) => [...answers.values()].some((a) => a.classValue !== null));
  exits = classifyExits(exits, gridded);

  // The price fingerprint (cross-asset): the classes a deposit of the sampled input could have had, by when it was made.
  let fingerprint: ReturnType<typeof fingerprintMatch> | null = null;
  let fingerprintOptions: Map<string, string[]> | null = null;
  let crossAsset: CrossAssetFigures | null = null;
  if (input.samples && input.sampledInput) {
    const wethDest = dests.find((d) => d.key === 'destination:WETH')!;
    const inputUnits = BigInt(Math.round(Number(input.sampledInput) * 10 ** usdc('source').decimals));
    const fp = fingerprintClasses(entries, input.samples, inputUnits, wethDest, known.depositTimeoutSeconds);
    for (const [id, keys] of fp) {
      const now = classes.get(id) ?? new Set<string>();
      classes.set(id, new Set([...[...now].filter((k) => !k.startsWith(`${wethDest.chainId}:${wethDest.token}:`)), ...keys]));
    }
    fingerprint = fingerprintMatch(entries, exits, fp);
    fingerprintOptions = fingerprintCandidates(entries, exits, fp);
    const seen = epochsSeen(input.samples);
    const wethPayouts = exits.flatMap((x) => (x.payout && x.payout.token === wethDest.token ? [x.payout.value] : []));
    crossAsset = {
      pricesMove: await bridgePricesMove(known),
      samples: input.samples.length,
      epochsSeen: seen.epochs,
      sampledValues: seen.values,
      payouts: wethPayouts.length,
      payoutValues: new Set(wethPayouts).size,
      predicted: [...fp.values()].filter((v) => v.length > 0).length,
      deposits: fp.size,
    };
  }

  // The ASP's roots: which labels were approved at the root each withdrawal's proof names.
  const leaves = view.aspLeaves;
  const prefixes = leaves ? aspPrefixes(leaves) : null;
  const rootsOnChain = aspRootsOnChain(hub, known.entrypoint);
  const ragequit = ragequitLabels(hub, known.pool);
  const byPool = withdrawalCandidates(entries, exits, classes, leaves && prefixes ? { leaves, prefixes } : null, ragequit);
  // The gate's timing (exit epochs): with the service's published rules, time rules out what could not be leaving.
  const approvedAt = leaves && prefixes ? labelApprovalTimes(hub, known.entrypoint, leaves, prefixes) : new Map<bigint, number>();
  const candidates = gateTimingCandidates(byPool, entries, exits, approvedAt, known);

  // The attacker's own routes: both ends known.
  const own = new Map<string, string>();
  for (const o of input.own) {
    const entry = entries.find((e) => e.source?.id === o.depositAddress);
    const exit = exits.find((x) => x.payout && x.payout.id === o.payoutTx);
    if (entry && exit) own.set(entry.id, exit.id);
  }
  const classGuess = classFifoMatch(entries, exits, candidates, own);
  const posterior = matchingPosterior(new Map([...candidates].map(([x, c]) => [x, c.ids])), new Map([...own].map(([e, x]) => [x, e])));

  const predictedPayouts = new Map(
    entered.map((d) => {
      const answers = quotes.get(human(d.value));
      return [d.id, answers ? [...answers.values()].map((a) => a.value) : []] as const;
    }),
  );

  const depositAddresses = new Set(entered.map((d) => d.id));
  const refunds = depositRefunds(source, usdc('source').address, depositAddresses, bridgeSends);

  return {
    deposits,
    withdrawals,
    entered,
    paid,
    entries,
    exits,
    /** Per withdrawal: its candidates by class, state root, ASP root and ragequit (before the gate's timing). */
    byPool,
    /** Per withdrawal: what is left after the gate's published timing (the public-data likelihood attacker's candidates). */
    candidates,
    /** When each label was first approved on chain (RootUpdated block time, s). */
    approvedAt,
    classes,
    posterior,
    own,
    refunds,
    ownPairs: own.size,
    crossAsset,
    asp: {
      leaves: leaves?.length ?? null,
      rootsOnChain: rootsOnChain.length,
      rootsReproduced: prefixes ? rootsOnChain.filter((r) => prefixes.has(r)).length : 0,
      ragequits: ragequit.size,
      labelApprovedAt: (label: bigint | null) => (label !== null && leaves ? leaves.indexOf(label) : -1),
    },
    control: identifierLinks(asItems(hub, fills), asItems(hub, deposits)),
    pool: {
      identifier: identifierLinks(asItems(hub, deposits), asItems(hub, withdrawals)),
      stateRoot: stateRootLinks(deposits, withdrawals),
      gas: gasFundingLinks(hub, usdc('hub').address, deposits, withdrawals),
      value: rankFifoMatch(deposits, withdrawals),
      rootAware: rankFifoMatch(deposits, withdrawals, insideProofRoot),
      classFifo: classGuess,
      fingerprint,
      fingerprintOptions,
    },
    endToEnd: {
      identifier: identifierLinks(
        asItems(source, entered),
        paid.map((p) => ({ id: p.id, chain: payoutChain(p), txHashes: p.txHashes })),
      ),
      value: rankFifoMatch(entered, paid, () => true, true),
      classFifo: endToEndOf(classGuess, entries, exits),
      fingerprint: fingerprint ? endToEndOf(fingerprint, entries, exits) : null,
      quotePredictable: quotePredictable(entered, paid, predictedPayouts),
    },
  };
}

export interface CrossAssetFigures {
  /** The bridge's prices walk (its GET /_emulator/prices answers); false: the fingerprint has nothing to read. */
  pricesMove: boolean;
  samples: number;
  epochsSeen: number;
  sampledValues: number;
  payouts: number;
  payoutValues: number;
  /** Deposits of the sampled input for which the samples predicted at least one class. */
  predicted: number;
  deposits: number;
}

/** What the attacker's run gives. */
export type Guesses = Awaited<ReturnType<typeof attack>>;
