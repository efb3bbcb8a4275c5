/**
 * Linkability benchmark (design §4b): an outside observer's attempt to link deposits to payouts and pool
 * deposits to pool withdrawals, on the real local stack, printed next to chance.
 *
 *   npm run bench:linkability -- [--transfers 12] [--shared 8] [--delay-max 20] [--min-set 1] [--json]
 *     [--shared-amount 100] [--gap-max 1.5] [--max-wait 60] [--timeout 600]; BENCH_LOG_LEVEL=info shows service logs
 *
 * The attacker (attacks.ts) sees only public data: the three chains' JSON-RPC (blocks, transactions, native
 * value, logs, code) and the public quote endpoint (observe.ts). The harness (harness.ts) alone uses the
 * database and GET of the routes it created, to know the truth and score the guesses (score.ts).
 * Exit code 0 after printing; 1 only when the harness itself failed (stack, transfers not completing).
 */
import { parseArgs } from 'node:util';
import { formatUnits } from 'viem';
import {
  type FunderSummary,
  gasFundingLinks,
  hubFills,
  identifierLinks,
  insideProofRoot,
  type Item,
  payouts,
  poolDeposits,
  poolWithdrawals,
  quotePredictable,
  rankFifoMatch,
  sourceDeposits,
  stateRootLinks,
} from './attacks.ts';
import { awaitTransfers, type BenchOptions, createTransfers, fundTransfers, groundTruth, publicKnowledge, startBench } from './harness.ts';
import { observe, type PublicKnowledge, type PublicView, publicQuote } from './observe.ts';
import { type GroupScore, type LinkScore, type OrderScore, orderScore, type RouteTruth, rootBoundedSet, scoreGroup, scoreLinks } from './score.ts';

interface Results {
  settings: {
    transfers: number;
    shared: number;
    sharedAmount: string;
    delayMaxSeconds: number;
    gapMaxSeconds: number;
    minAnonymitySet: number;
    maxWaitSeconds: number;
  };
  completed: number;
  seconds: { stack: number; transfers: number; attack: number; total: number };
  observed: { poolDeposits: number; poolWithdrawals: number; sourceDeposits: number; payouts: number };
  /** Positive control: the identifier attack must link each bridge-in fill to its pool deposit (same hub account). */
  control: LinkScore;
  pool: {
    identifier: LinkScore;
    stateRoot: LinkScore;
    /** Per withdrawal in mined order: tree size at its proof's root, and just before it was mined. */
    proofRoots: Array<{ proofLeaves: number | null; leavesBefore: number }>;
    gas: LinkScore & { funders: FunderSummary[] };
    shared: GroupScore;
    /** FIFO restricted to deposits inside the proof's state root. */
    sharedRootAware: GroupScore;
    distinct: GroupScore;
    order: OrderScore;
  };
  endToEnd: { identifier: LinkScore; shared: GroupScore; distinct: GroupScore; quotePredictable: number; order: OrderScore };
  routes: Array<RouteTruth & { rootBoundedSet: number | null; poolLinked: boolean; endToEndLinked: boolean }>;
}

function options() {
  const { values } = parseArgs({
    options: {
      transfers: { type: 'string', default: '12' },
      shared: { type: 'string', default: '8' },
      'shared-amount': { type: 'string', default: '100' },
      'delay-max': { type: 'string', default: '20' },
      'gap-max': { type: 'string', default: '1.5' },
      'min-set': { type: 'string', default: '1' },
      'max-wait': { type: 'string', default: '60' },
      timeout: { type: 'string', default: '600' },
      json: { type: 'boolean', default: false },
    },
  });
  const int = (name: string, text: string, min: number) => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer ≥ ${min} (got ${text})`);
    return n;
  };
  const seconds = (name: string, text: string) => {
    const n = Number(text);
    if (!Number.isFinite(n) || n < 0 || n > 600) throw new Error(`--${name} must be a number of seconds in [0, 600] (got ${text})`);
    return n;
  };
  const transfers = int('transfers', values.transfers, 1);
  const shared = int('shared', values.shared, 0);
  if (shared > transfers) throw new Error('--shared must not exceed --transfers');
  return {
    json: values.json,
    bench: {
      transfers,
      shared,
      sharedAmount: values['shared-amount'],
      delayMaxSeconds: int('delay-max', values['delay-max'], 1),
      gapMaxSeconds: seconds('gap-max', values['gap-max']),
      minAnonymitySet: int('min-set', values['min-set'], 1),
      maxWaitSeconds: int('max-wait', values['max-wait'], 1),
      timeoutSeconds: int('timeout', values.timeout, 10),
      progress: (line: string) => process.stderr.write(`[bench] ${line}\n`),
    } satisfies BenchOptions,
  };
}

/** The attacker's whole run: public data in, guesses out. */
async function attack(known: PublicKnowledge, view: PublicView) {
  const { source, hub, destination } = view.chains;
  const usdc = (role: 'source' | 'hub' | 'destination') => known.chains.find((c) => c.role === role)!.tokens.find((t) => t.symbol === 'USDC')!;
  const asItems = (chain: typeof hub, items: Item[]) => items.map((i) => ({ id: i.id, chain, txHashes: i.txHashes }));

  const deposits = poolDeposits(hub, known.entrypoint, known.pool);
  const withdrawals = poolWithdrawals(hub, known.entrypoint, known.pool);
  const fills = hubFills(hub, usdc('hub').address, deposits);
  const entered = sourceDeposits(source, usdc('source').address);
  const paid = payouts(destination, usdc('destination').address);
  const predicted = new Map(
    await Promise.all(entered.map(async (d) => [d.id, await publicQuote(known, formatUnits(d.value, usdc('source').decimals)).catch(() => null)] as const)),
  );

  return {
    deposits,
    withdrawals,
    entered,
    paid,
    control: identifierLinks(asItems(hub, fills), asItems(hub, deposits)),
    pool: {
      identifier: identifierLinks(asItems(hub, deposits), asItems(hub, withdrawals)),
      stateRoot: stateRootLinks(deposits, withdrawals),
      gas: gasFundingLinks(hub, usdc('hub').address, deposits, withdrawals),
      matching: rankFifoMatch(deposits, withdrawals),
      rootAware: rankFifoMatch(deposits, withdrawals, insideProofRoot),
    },
    endToEnd: {
      identifier: identifierLinks(asItems(source, entered), asItems(destination, paid)),
      matching: rankFifoMatch(entered, paid),
      quotePredictable: quotePredictable(entered, paid, predicted),
    },
  };
}

function score(routes: RouteTruth[], guesses: Awaited<ReturnType<typeof attack>>) {
  const completed = routes.filter((r) => r.status === 'COMPLETED');
  const shared = completed.filter((r) => r.group === 'shared');
  const distinct = completed.filter((r) => r.group === 'distinct');
  const truth = (pair: (r: RouteTruth) => [string | null, string | null]) =>
    new Map(
      completed.flatMap((r) => {
        const [a, b] = pair(r);
        return a && b ? [[a, b] as const] : [];
      }),
    );
  const poolTruth = truth((r) => [r.shieldTx, r.unshieldTx]);
  const byId = <T extends Item>(items: T[]) => new Map(items.map((i) => [i.id, i]));
  const deposits = byId(guesses.deposits);
  const withdrawals = byId(guesses.withdrawals);
  const poolDep = (r: RouteTruth) => r.shieldTx;
  const poolWd = (r: RouteTruth) => r.unshieldTx;
  const srcDep = (r: RouteTruth) => r.depositAddress;
  const payout = (r: RouteTruth) => r.payoutTx;
  return {
    completed: completed.length,
    control: scoreLinks(
      guesses.control,
      truth((r) => [r.fillTx, r.shieldTx]),
    ),
    pool: {
      identifier: scoreLinks(guesses.pool.identifier, poolTruth),
      stateRoot: scoreLinks(guesses.pool.stateRoot, poolTruth),
      proofRoots: [...guesses.withdrawals].sort((a, b) => a.order - b.order).map((w) => ({ proofLeaves: w.proofLeaves, leavesBefore: w.leavesBefore })),
      gas: { ...scoreLinks(guesses.pool.gas.links, poolTruth), funders: guesses.pool.gas.funders },
      shared: scoreGroup(shared, guesses.pool.matching, poolDep, poolWd),
      sharedRootAware: scoreGroup(shared, guesses.pool.rootAware, poolDep, poolWd),
      distinct: scoreGroup(distinct, guesses.pool.matching, poolDep, poolWd),
      order: orderScore(shared, deposits, withdrawals),
    },
    endToEnd: {
      identifier: scoreLinks(
        guesses.endToEnd.identifier,
        truth((r) => [r.depositAddress, r.payoutTx]),
      ),
      shared: scoreGroup(shared, guesses.endToEnd.matching, srcDep, payout),
      distinct: scoreGroup(distinct, guesses.endToEnd.matching, srcDep, payout),
      quotePredictable: guesses.endToEnd.quotePredictable,
      order: orderScore(
        shared.map((r) => ({ ...r, shieldTx: r.depositAddress, unshieldTx: r.payoutTx })),
        byId(guesses.entered),
        byId(guesses.paid),
      ),
    },
    routes: routes.map((r) => ({
      ...r,
      rootBoundedSet: rootBoundedSet(r, deposits, withdrawals),
      poolLinked: !!r.shieldTx && guesses.pool.matching.get(r.shieldTx) === r.unshieldTx,
      endToEndLinked: guesses.endToEnd.matching.get(r.depositAddress) === r.payoutTx,
    })),
  };
}

// ------------------------------------------------------------------ report

const pad = (text: string | number, width: number) => String(text).padEnd(width);
function sharedMean(r: Results, key: 'anonymitySet' | 'rootBoundedSet' | 'waitedSeconds'): string {
  const xs = r.routes.flatMap((x) => (x.group === 'shared' && x[key] !== null ? [x[key]] : []));
  return xs.length ? (xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(1) : '-';
}

function groupLine(label: string, g: GroupScore, target: boolean): string {
  if (g.size === 0) return `  ${label}: none`;
  const verdict = target ? `; target ≤ ${g.chance + 1} → ${g.correct <= g.chance + 1 ? 'MET' : 'MISSED'}` : '';
  return `  ${label} (K=${g.size}): attacker correct ${g.correct}/${g.size}; chance ${g.chance.toFixed(1)}/${g.size}${verdict}`;
}

function linkLines(label: string, s: LinkScore): string[] {
  const lines = [`  ${label}: ${s.links} (correct ${s.correct})`];
  for (const d of s.details.slice(0, 8))
    lines.push(`      ${d.correct ? 'CORRECT' : 'wrong  '} ${d.deposit.slice(0, 12)}… ↔ ${d.withdrawal.slice(0, 12)}…  via ${d.via}`);
  if (s.details.length > 8) lines.push(`      … ${s.details.length - 8} more`);
  return lines;
}

function orderLine(o: OrderScore): string {
  return `  shared group exit order (entry 1..${o.exitPositions.length} → exit positions): [${o.exitPositions.join(', ')}]; inversions ${o.inversions}/${o.pairs}, Kendall tau ${o.kendallTau.toFixed(2)} (1 = FIFO, ~0 = unrelated)`;
}

function report(r: Results): string {
  const s = r.settings;
  const lines = [
    `linkability benchmark: ${s.transfers} transfers (${s.shared} × ${s.sharedAmount} USDC, ${s.transfers - s.shared} distinct) funded 0–${s.gapMaxSeconds} s apart, delay 1–${s.delayMaxSeconds} s, min anonymity set ${s.minAnonymitySet}, max wait ${s.maxWaitSeconds} s`,
    `completed ${r.completed}/${s.transfers}; time: stack ${r.seconds.stack} s, transfers ${r.seconds.transfers} s, attack ${r.seconds.attack} s, total ${r.seconds.total} s`,
    `observed (public data): ${r.observed.poolDeposits} pool deposits, ${r.observed.poolWithdrawals} pool withdrawals, ${r.observed.sourceDeposits} source deposits, ${r.observed.payouts} destination payouts`,
    '',
    `positive control: identifier attack links bridge-in fills to pool deposits ${r.control.correct}/${r.completed} correct (${r.control.links} links; should be all: they share the hub account)`,
    '',
    'pool deposit → pool withdrawal (hub chain)',
    ...linkLines('identifier links', r.pool.identifier),
    ...linkLines('state-root links (proof names the root right after a deposit)', r.pool.stateRoot),
    `  tree size at each proof's state root / just before it was mined (mined order): ${r.pool.proofRoots.map((x) => `${x.proofLeaves ?? '?'}/${x.leavesBefore}`).join(', ')}`,
    ...linkLines('gas-funding links', r.pool.gas),
    ...r.pool.gas.funders.map((f) => `      funder ${f.funder}: funds accounts of ${f.deposits} deposits, ${f.withdrawals} withdrawals`),
    groupLine('shared-amount group, FIFO', r.pool.shared, true),
    groupLine('shared-amount group, FIFO among deposits inside the proof root', r.pool.sharedRootAware, true),
    `  distinct amounts (${r.pool.distinct.size}): linked by amount ${r.pool.distinct.correct}/${r.pool.distinct.size} (expected: a unique amount is its own anonymity set)`,
    orderLine(r.pool.order),
    '',
    'end-to-end: source deposit → destination payout',
    ...linkLines('identifier links', r.endToEnd.identifier),
    groupLine('shared-amount group, FIFO', r.endToEnd.shared, true),
    `  distinct amounts (${r.endToEnd.distinct.size}): linked by amount ${r.endToEnd.distinct.correct}/${r.endToEnd.distinct.size} (expected: a unique amount is its own anonymity set)`,
    `  public quote predicts the exact payout of ${r.endToEnd.quotePredictable}/${r.observed.sourceDeposits} source deposits`,
    orderLine(r.endToEnd.order),
    '',
    'per route (GET of the harness’s own routes)',
    `  ${pad('routeId', 14)} ${pad('group', 8)} ${pad('amount', 8)} ${pad('status', 10)} ${pad('anonSet', 8)} ${pad('rootSet', 8)} ${pad('waited s', 9)} ${pad('pool', 5)} e2e`,
    ...r.routes.map(
      (x) =>
        `  ${pad(`${x.routeId.slice(0, 11)}…`, 14)} ${pad(x.group, 8)} ${pad(x.amount, 8)} ${pad(x.status, 10)} ${pad(x.anonymitySet ?? '-', 8)} ${pad(x.rootBoundedSet ?? '-', 8)} ${pad(x.waitedSeconds ?? '-', 9)} ${pad(x.poolLinked ? 'LINK' : '-', 5)} ${x.endToEndLinked ? 'LINK' : '-'}`,
    ),
    "  anonSet = GET privacy.anonymitySet; rootSet = own + later same-value deposits inside the proof's state root (what a proof reader sees)",
    `  shared group means: anonSet ${sharedMean(r, 'anonymitySet')}, rootSet ${sharedMean(r, 'rootBoundedSet')}, waited ${sharedMean(r, 'waitedSeconds')} s`,
  ];
  return `${lines.join('\n')}\n`;
}

// ------------------------------------------------------------------ main

async function main(): Promise<number> {
  const { json, bench } = options();
  const t0 = Date.now();
  const secondsSince = (t: number) => Math.round((Date.now() - t) / 1000);
  bench.progress('starting the local stack');
  const running = await startBench(bench);
  let failed = false;
  try {
    const { stack } = running;
    const tStack = secondsSince(t0);
    const t1 = Date.now();
    const created = await createTransfers(stack, bench);
    bench.progress(`created ${created.length} transfers`);
    await fundTransfers(stack, created, bench);
    const views = await awaitTransfers(stack, created, bench);
    const routes = await groundTruth(stack, created, views);
    const tTransfers = secondsSince(t1);
    const incomplete = routes.filter((r) => r.status !== 'COMPLETED');
    if (incomplete.length > 0) {
      failed = true;
      bench.progress(
        `WARNING: ${incomplete.length} transfers did not complete (${incomplete.map((r) => `${r.routeId}: ${r.status}`).join(', ')}); scoring the completed ones`,
      );
    }

    const t2 = Date.now();
    const known = publicKnowledge(stack);
    const guesses = await attack(known, await observe(known));
    const scored = score(routes, guesses);
    const results: Results = {
      settings: {
        transfers: bench.transfers,
        shared: bench.shared,
        sharedAmount: bench.sharedAmount,
        delayMaxSeconds: bench.delayMaxSeconds,
        gapMaxSeconds: bench.gapMaxSeconds,
        minAnonymitySet: bench.minAnonymitySet,
        maxWaitSeconds: bench.maxWaitSeconds,
      },
      completed: scored.completed,
      control: scored.control,
      seconds: { stack: tStack, transfers: tTransfers, attack: secondsSince(t2), total: secondsSince(t0) },
      observed: {
        poolDeposits: guesses.deposits.length,
        poolWithdrawals: guesses.withdrawals.length,
        sourceDeposits: guesses.entered.length,
        payouts: guesses.paid.length,
      },
      pool: scored.pool,
      endToEnd: scored.endToEnd,
      routes: scored.routes,
    };
    process.stdout.write(json ? `${JSON.stringify(results, null, 2)}\n` : report(results));
  } finally {
    const tStop = Date.now();
    bench.progress('stopping the local stack');
    await running.close();
    bench.progress(`stopped in ${secondsSince(tStop)} s`);
  }
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`[bench] harness failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
