/**
 * The chain analyst's scenario (issue 33): the links that bypass the pool, each attack's figure after the fix beside
 * the figure of the rule it replaced, replayed on the same run's data.
 * - Address reuse: `--reuse` users fund their route from its own recipient. Attack: a payout whose recipient sent a
 *   deposit into any deposit address. Before issue 33 the route went through the pool and was paid (linked with
 *   certainty); now it is refused before the pool (ADDRESS_REUSE_REFUSED) and refunded to its refundAddress.
 * - Sender forgery: a forger emits `transferFrom(X → deposit address, 0)` (no allowance needed) in the block of every
 *   user's deposit, after it, naming one address X for every route. Before: the watcher took the latest Transfer's
 *   sender and transaction (replayed from the chain's logs: X and the forger's transaction for every route, one client
 *   for the whole class); now: the recorded sender (transfers.deposit_sender) and GET's depositTxHash.
 * - Funding epoch from a routeId: an observer holding every routeId (no statusToken) reads the public view every 0.5 s
 *   and notes when it first showed BRIDGING_IN; candidates: the source deposits (public) in the window that rule allows
 *   before that moment; guess: the latest. Before: the view showed BRIDGING_IN at the first exit epoch after the funding
 *   (publicProgressShownAt with no delay, replayed on each route's recorded funding time); now: a delay of the route's
 *   own first. The webhook receiver's first arrival (BRIDGING_IN's delivery) is scored the same way.
 * - Client stream timing: each user follows its route with the typed client twice, as two apps would: `transport:
 *   'auto'` (Server-Sent Events, the default before issue 33) and the default `quiet`; an observer of each connection
 *   sees when data arrives, not what (TLS). Attack: the last data the connection carried (the SSE stream's last frame,
 *   COMPLETED; the last quiet read) against the payouts in the window its rule allows before it; guess: the latest.
 * The attacker's inputs are public (the chains' logs, the public view, the receiver's arrival times, a connection's
 * timing); the harness alone reads the database, for the truth and to replay the old rules.
 */
import { inArray } from 'drizzle-orm';
import { createPublicClient, createWalletClient, erc20Abi, http, parseAbiItem, toHex, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { LocalStack } from '../../devnet/stack.ts';
import { transferStatuses, transfers } from '../../src/db/schema.ts';
import { publicProgressShownAt } from '../../src/transfers/publicView.ts';
import { createPrivateRouteClient } from '../../src/client/index.ts';
import { api, chainOf, clientKey } from '../support/stack.ts';
import { attack } from './attacker.ts';
import { type MomentScore, momentAttack } from './attacks.ts';
import { awaitTransfers, type BenchOptions, classInputs, publicKnowledge, startBench, startHookReceiver, watchPublicViews } from './harness.ts';
import { observe } from './observe.ts';

const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');
/** WEBHOOK_MAX_DELAY_SECONDS on the stack (the default). */
const WEBHOOK_MAX_DELAY_SECONDS = 30;
/** The observer's polling interval and the slack for a block's timestamp against the wall clock (s). */
const SLACK_SECONDS = 2;

interface AnalystRoute {
  routeId: string;
  amount: string;
  units: string;
  depositAddress: Address;
  recipient: Address;
  hookPath: string;
  reuse: boolean;
  /** The user's funding wallet (its recipient too, when it reuses its address). */
  walletKey: Hex;
  statusToken: string;
  sender: Address;
  fundingTx: Hex | null;
  fundingBlock: bigint | null;
  pokeTx: Hex | null;
}

export interface AnalystResult {
  scenario: 'analyst';
  mode: 'relay' | 'cctp';
  settings: Record<string, string | number>;
  notes: string[];
  reuse: { routes: number; refusedBeforePool: number; refundedToRecipient: number; linkedAfter: number; linkedBefore: number };
  forgery: {
    routes: number;
    /** The old rule (latest Transfer while awaiting the deposit), replayed on the chain's logs. */
    before: { senderIsForger: number; txIsForgers: number; distinctClients: number };
    after: { senderIsUser: number; txIsUsers: number; distinctClients: number; sets: number[] };
  };
  fundingEpoch: { before: MomentScore; after: MomentScore; webhook: MomentScore; windows: { before: number; after: number; webhook: number } };
  clientStream: { sse: MomentScore; quiet: MomentScore; windows: { sse: number; quiet: number } };
  completed: number;
  seconds: { total: number };
}

export async function runAnalyst(bench: BenchOptions): Promise<{ result: AnalystResult; failed: boolean }> {
  const t0 = Date.now();
  bench.progress('starting the local stack (relay mode)');
  const running = await startBench(bench);
  const notes: string[] = [];
  let failed = false;
  try {
    const { stack } = running;
    const { inputs, classValue } = await classInputs(stack, bench.classAmount, bench.users);
    notes.push(
      `${bench.users} users (own client address, own funding wallet) of the class ${classValue ?? '-'}, ${bench.reuse} of them funding from their recipient`,
    );
    const receiver = await startHookReceiver();
    const forgerKey = generatePrivateKey();
    const named = privateKeyToAccount(generatePrivateKey()).address;
    try {
      const routes: AnalystRoute[] = [];
      for (let i = 0; i < bench.users; i++) {
        const walletKey = generatePrivateKey();
        const reuse = i < bench.reuse;
        const recipient = reuse ? privateKeyToAccount(walletKey).address : privateKeyToAccount(generatePrivateKey()).address;
        routes.push(
          await create(stack, bench, {
            amount: inputs[i % inputs.length]!,
            client: `10.233.0.${i + 1}`,
            recipient,
            walletKey,
            reuse,
            hookBase: receiver.base,
            i,
          }),
        );
      }
      bench.progress(`created ${routes.length} transfers`);
      const views = watchPublicViews(stack, routes);
      const streams = routes.filter((r) => !r.reuse).map((r) => watchWithClients(stack, r));
      for (const route of routes) {
        await fundWithPoke(stack, route, forgerKey, named, bench.poke);
        await sleep(Math.random() * bench.gapMaxSeconds * 1000);
      }
      bench.progress(`funded ${routes.length} deposit addresses${bench.poke ? ', each poked by the forger in the same block' : ' (no pokes)'}`);
      const final = await awaitTransfers(
        stack,
        routes.map((r) => ({ routeId: r.routeId, reject: false })),
        bench,
      );
      const sightings = await views(60_000);
      const completed = routes.filter((r) => final.get(r.routeId)?.status === 'COMPLETED').length;
      const expected = routes.filter((r) => !r.reuse).length;
      if (completed !== expected) {
        failed = true;
        bench.progress(`WARNING: ${completed}/${expected} non-reusing routes completed`);
      }
      // The quiet clients read on after the end for a random time: wait until every connection went silent.
      await Promise.all(streams.map((s) => s.done));
      await sleep(QUIET_AFTER_END_MS + QUIET_PERIOD_MS + 2_000);
      // Deliveries of BRIDGING_IN: the view's moment and the delivery's own random delay.
      const hookDeadline = Date.now() + (WEBHOOK_MAX_DELAY_SECONDS + 10) * 1000;
      while (Date.now() < hookDeadline && routes.some((r) => !receiver.arrivals.has(r.hookPath))) await sleep(1000);

      // --- the truth and the old rules' replay (harness only)
      const db = stack.service.db;
      const ids = routes.map((r) => r.routeId);
      const rows = new Map((await db.select().from(transfers).where(inArray(transfers.routeId, ids))).map((t) => [t.routeId, t]));
      const funded = new Map(
        (await db.select().from(transferStatuses).where(inArray(transferStatuses.routeId, ids)))
          .filter((s) => s.status === 'BRIDGING_IN')
          .map((s) => [s.routeId, s.reachedAt.getTime()]),
      );
      const source = chainOf(stack, 'source');
      const usdc = source.tokens.find((t) => t.symbol === 'USDC')!.address;
      const client = createPublicClient({ transport: http(source.rpcUrl) });
      const logs = await client.getLogs({ address: usdc, event: TRANSFER, args: { to: routes.map((r) => r.depositAddress) }, fromBlock: 0n });

      // Address reuse: payouts (public) to an address that sent a deposit (public).
      const known = publicKnowledge(stack, bench.mode);
      const g = await attack(known, await observe(known), { samples: null, sampledInput: null, own: [] });
      const depositSenders = new Set(logs.filter((l) => (l.args.value ?? 0n) > 0n).map((l) => l.args.from!.toLowerCase()));
      const reused = routes.filter((r) => r.reuse);
      const linkedAfter = g.paid.filter((p) => depositSenders.has(p.recipient.toLowerCase())).length;
      const refunds = await client.getLogs({ address: usdc, event: TRANSFER, args: { from: reused.map((r) => r.depositAddress) }, fromBlock: 0n });
      const reuse = {
        routes: reused.length,
        refusedBeforePool: reused.filter(
          (r) => final.get(r.routeId)?.status === 'FAILED' && (rows.get(r.routeId)?.error ?? '').startsWith('ADDRESS_REUSE_REFUSED'),
        ).length,
        refundedToRecipient: refunds.filter((l) => reused.some((r) => r.recipient.toLowerCase() === l.args.to!.toLowerCase())).length,
        linkedAfter,
        // Before: the route went through the pool and paid its recipient, the address that funded it.
        linkedBefore: reused.length,
      };

      // Sender forgery: the old rule's sender (latest Transfer into the address while it awaited its deposit, which
      // the same block's poke always is) against the recorded one.
      const latest = new Map<string, { from: string; tx: string }>();
      for (const l of [...logs].sort((a, b) => Number(a.blockNumber - b.blockNumber) || a.logIndex - b.logIndex)) {
        const route = routes.find((r) => r.depositAddress.toLowerCase() === l.args.to!.toLowerCase());
        if (route?.fundingBlock !== null && route !== undefined && l.blockNumber <= route.fundingBlock)
          latest.set(route.routeId, { from: l.args.from!.toLowerCase(), tx: l.transactionHash });
      }
      const honest = routes.filter((r) => !r.reuse);
      const fullViews = new Map(
        await Promise.all(
          honest.map(
            async (r) =>
              [
                r.routeId,
                await api<{ depositTxHash?: string | null; privacy?: { anonymitySet: number } | null }>(stack, 'GET', `/api/private-route/${r.routeId}`),
              ] as const,
          ),
        ),
      );
      const forgery = {
        routes: honest.length,
        before: {
          senderIsForger: honest.filter((r) => latest.get(r.routeId)?.from === named.toLowerCase()).length,
          txIsForgers: honest.filter((r) => latest.get(r.routeId)?.tx === r.pokeTx).length,
          distinctClients: new Set(honest.map((r) => latest.get(r.routeId)?.from)).size,
        },
        after: {
          senderIsUser: honest.filter((r) => rows.get(r.routeId)?.depositSender?.toLowerCase() === r.sender.toLowerCase()).length,
          txIsUsers: honest.filter((r) => fullViews.get(r.routeId)?.depositTxHash === r.fundingTx).length,
          distinctClients: new Set(honest.map((r) => rows.get(r.routeId)?.depositSender?.toLowerCase())).size,
          sets: honest.map((r) => fullViews.get(r.routeId)?.privacy?.anonymitySet ?? 0).sort((a, b) => a - b),
        },
      };

      // Funding epoch from a routeId: the public view's first BRIDGING_IN, the receiver's first arrival.
      const epoch = bench.exitEpochSeconds;
      const deposits = g.entered.map((d) => ({ id: d.id, timestamp: d.timestamp, classKey: null }));
      const truthOf = (r: AnalystRoute) => r.depositAddress.toLowerCase();
      const windows = { before: epoch + SLACK_SECONDS, after: bench.publicDelaySeconds + epoch + SLACK_SECONDS, webhook: 0 };
      windows.webhook = windows.after + WEBHOOK_MAX_DELAY_SECONDS;
      const scored = honest.filter((r) => funded.has(r.routeId));
      const before = momentAttack(
        scored.map((r) => ({
          at: publicProgressShownAt(funded.get(r.routeId)!, { epochSeconds: epoch, delayMs: 0 }) / 1000 + SLACK_SECONDS / 2,
          classKeys: null,
          truth: truthOf(r),
        })),
        deposits,
        { windowSeconds: windows.before },
      );
      const after = momentAttack(
        scored.flatMap((r) => {
          const seen = sightings.get(r.routeId)?.get('BRIDGING_IN');
          return seen === undefined ? [] : [{ at: seen / 1000, classKeys: null, truth: truthOf(r) }];
        }),
        deposits,
        { windowSeconds: windows.after },
      );
      const webhook = momentAttack(
        scored.flatMap((r) => {
          const first = receiver.arrivals.get(r.hookPath)?.[0];
          return first === undefined ? [] : [{ at: first / 1000, classKeys: null, truth: truthOf(r) }];
        }),
        deposits,
        { windowSeconds: windows.webhook },
      );
      // Client stream timing: the last data each connection carried, against the payouts.
      const paid = g.paid.map((p) => ({ id: p.id.toLowerCase(), timestamp: p.timestamp, classKey: null }));
      const streamWindows = { sse: SSE_WINDOW_SECONDS, quiet: (QUIET_AFTER_END_MS + QUIET_PERIOD_MS) / 1000 + SSE_WINDOW_SECONDS };
      const payoutOf = (r: AnalystRoute) => (final.get(r.routeId)?.payoutTxHash ?? '').toLowerCase();
      const lastData = (which: 'sse' | 'quiet') =>
        streams.flatMap((s) => {
          const last = s.arrivals[which].at(-1);
          const route = routes.find((r) => r.routeId === s.routeId)!;
          return last === undefined || !payoutOf(route) ? [] : [{ at: last / 1000, classKeys: null, truth: payoutOf(route) }];
        });
      const clientStream = {
        sse: momentAttack(lastData('sse'), paid, { windowSeconds: streamWindows.sse }),
        quiet: momentAttack(lastData('quiet'), paid, { windowSeconds: streamWindows.quiet }),
        windows: streamWindows,
      };
      return {
        result: {
          scenario: 'analyst',
          mode: bench.mode,
          settings: {
            users: bench.users,
            reuse: bench.reuse,
            'exit epoch s': epoch,
            'public delay s': bench.publicDelaySeconds,
            'gap s': `0–${bench.gapMaxSeconds}`,
            'min set': bench.minAnonymitySet,
            poked: bench.poke ? 'yes' : 'no',
          },
          notes,
          reuse,
          forgery,
          fundingEpoch: { before, after, webhook, windows },
          clientStream,
          completed,
          seconds: { total: Math.round((Date.now() - t0) / 1000) },
        },
        failed,
      };
    } finally {
      await receiver.close();
    }
  } finally {
    bench.progress('stopping the local stack');
    await running.close();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function create(
  stack: LocalStack,
  bench: BenchOptions,
  p: { amount: string; client: string; recipient: Address; walletKey: Hex; reuse: boolean; hookBase: string; i: number },
): Promise<AnalystRoute> {
  const hookPath = `/analyst/${p.i}`;
  const t = await api<{ routeId: string; amount: string; depositAddress: Address; statusToken: string }>(
    stack,
    'POST',
    '/api/private-route',
    {
      sourceChainId: chainOf(stack, 'source').chainId,
      destChainId: chainOf(stack, 'destination').chainId,
      amount: p.amount,
      tokenSymbol: 'USDC',
      destTokenSymbol: 'USDC',
      userDestinationAddress: p.recipient,
      refundAddress: privateKeyToAccount(generatePrivateKey()).address,
      webhookUrl: `${p.hookBase}${hookPath}`,
      minAnonymitySet: bench.minAnonymitySet,
    },
    { 'X-Forwarded-For': p.client, 'X-Api-Key': await clientKey(stack, p.client) },
  );
  return {
    routeId: t.routeId,
    amount: p.amount,
    units: t.amount,
    depositAddress: t.depositAddress,
    recipient: p.recipient,
    hookPath,
    reuse: p.reuse,
    walletKey: p.walletKey,
    statusToken: t.statusToken,
    sender: privateKeyToAccount(p.walletKey).address,
    fundingTx: null,
    fundingBlock: null,
    pokeTx: null,
  };
}

/**
 * The user's deposit from its own wallet (funded by the faucet first), and the forger's zero-value transferFrom naming
 * `named`, after it in the same block (automine paused meanwhile): what an address-poisoning bot lands at best.
 */
async function fundWithPoke(stack: LocalStack, route: AnalystRoute, forgerKey: Hex, named: Address, poked: boolean): Promise<void> {
  const source = chainOf(stack, 'source');
  const usdc = source.tokens.find((t) => t.symbol === 'USDC')!.address;
  const transport = http(source.rpcUrl);
  const client = createPublicClient({ transport, pollingInterval: 100 });
  const user = privateKeyToAccount(route.walletKey);
  const forger = privateKeyToAccount(forgerKey);
  for (const account of [user.address, forger.address])
    await client.request({ method: 'anvil_setBalance' as never, params: [account, toHex(10n ** 17n)] as never });
  const faucet = createWalletClient({ account: privateKeyToAccount(stack.manifest.faucetPrivateKey), transport });
  const given = await faucet.writeContract({ chain: null, address: usdc, abi: erc20Abi, functionName: 'transfer', args: [user.address, BigInt(route.units)] });
  await client.waitForTransactionReceipt({ hash: given, timeout: 60_000 });
  const nonce = await client.getTransactionCount({ address: forger.address, blockTag: 'pending' });
  await client.request({ method: 'evm_setAutomine' as never, params: [false] as never });
  let deposit: Hex;
  let poke: Hex;
  try {
    deposit = await createWalletClient({ account: user, transport }).writeContract({
      chain: null,
      address: usdc,
      abi: erc20Abi,
      functionName: 'transfer',
      args: [route.depositAddress, BigInt(route.units)],
      gas: 100_000n,
      nonce: 0,
    });
    // Unpoked (--no-poke): the forger's transaction is a zero-value transfer to itself, so the block looks alike.
    const forgerWallet = createWalletClient({ account: forger, transport });
    const tx = { chain: null, address: usdc, abi: erc20Abi, gas: 100_000n, nonce } as const;
    poke = poked
      ? await forgerWallet.writeContract({ ...tx, functionName: 'transferFrom', args: [named, route.depositAddress, 0n] })
      : await forgerWallet.writeContract({ ...tx, functionName: 'transfer', args: [forger.address, 0n] });
    await client.request({ method: 'evm_mine' as never, params: [] as never });
  } finally {
    await client.request({ method: 'evm_setAutomine' as never, params: [true] as never });
  }
  const [d, q] = await Promise.all([deposit, poke].map((hash) => client.waitForTransactionReceipt({ hash, timeout: 60_000 })));
  if (d!.status !== 'success' || q!.status !== 'success' || d!.blockNumber !== q!.blockNumber || d!.transactionIndex > q!.transactionIndex)
    throw new Error(`the deposit and the poke of ${route.routeId} did not land in one block, the poke after (${d!.status}, ${q!.status})`);
  route.fundingTx = deposit;
  route.fundingBlock = d!.blockNumber;
  route.pokeTx = poke;
}

/** The quiet client's period and how long it reads on after the end, at most (shorter than the client's defaults). */
const QUIET_PERIOD_MS = 1_000;
const QUIET_AFTER_END_MS = 30_000;
/** From a payout to the stream's COMPLETED frame: the receipt, the projection, the event stream's notification. */
const SSE_WINDOW_SECONDS = 10;

/**
 * The user's two apps following its route with the typed client, `auto` (SSE) and `quiet`, each through a fetch that
 * notes when data arrives (what a network observer of that connection sees). `done`: both waits ended (the quiet one
 * reads on in the background).
 */
function watchWithClients(stack: LocalStack, route: AnalystRoute) {
  const arrivals = { sse: [] as number[], quiet: [] as number[] };
  const observed =
    (log: number[]): typeof fetch =>
    async (input, init) => {
      const response = await fetch(input, init);
      const body = response.body;
      if (!body) {
        log.push(Date.now());
        return response;
      }
      const reader = body.getReader();
      const timed = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { done, value } = await reader.read();
          if (done) controller.close();
          else {
            log.push(Date.now());
            controller.enqueue(value);
          }
        },
        cancel: (reason) => reader.cancel(reason),
      });
      return new Response(timed, { status: response.status, statusText: response.statusText, headers: response.headers });
    };
  const wait = (transport: 'auto' | 'quiet') =>
    createPrivateRouteClient({ baseUrl: stack.apiUrl, fetch: observed(arrivals[transport === 'auto' ? 'sse' : 'quiet']) })
      .waitForCompletion(route.routeId, {
        statusToken: route.statusToken,
        transport,
        pollIntervalMs: QUIET_PERIOD_MS,
        quietAfterEndMs: QUIET_AFTER_END_MS,
        signal: AbortSignal.timeout(900_000),
      })
      .catch(() => undefined);
  return { routeId: route.routeId, arrivals, done: Promise.all([wait('auto'), wait('quiet')]) };
}

// ------------------------------------------------------------------ report

const score = (m: MomentScore) =>
  `named ${m.linked}/${m.routes} (chance ${m.chance.toFixed(1)}, ${m.meanCandidates.toFixed(1)} candidates a route, own event outside the window ${m.misses})`;

export function analystReport(r: AnalystResult): string {
  const f = r.forgery;
  const e = r.fundingEpoch;
  return `${[
    `=== linkability: scenario analyst (issue 33: the links around the pool; deposit-address, Relay) ===`,
    `settings: ${Object.entries(r.settings)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    ...r.notes.map((n) => `note: ${n}`),
    `time: ${r.seconds.total} s; completed ${r.completed} (the reusing routes are refused by design)`,
    `address reuse (a payout to an address that funded a deposit): before ${r.reuse.linkedBefore}/${r.reuse.routes} linked with certainty (the route was paid to its funder); after: payouts to a funder ${r.reuse.linkedAfter}, routes refused before the pool ${r.reuse.refusedBeforePool}/${r.reuse.routes}, refunds sent to the recipient ${r.reuse.refundedToRecipient}`,
    `sender forgery (zero-value transferFrom naming one address X after every deposit, same block${r.settings.poked === 'yes' ? '' : '; NOT POKED in this run'}): routes ${f.routes}`,
    `  before (the latest Transfer's sender and transaction, replayed on the logs): sender X ${f.before.senderIsForger}/${f.routes}, depositTxHash the forger's ${f.before.txIsForgers}/${f.routes}, distinct clients ${f.before.distinctClients}${f.before.distinctClients === 1 && f.routes > 1 ? ' (one client: every set capped at 1)' : ''}`,
    `  after (transfers.deposit_sender, GET depositTxHash): sender the user ${f.after.senderIsUser}/${f.routes}, depositTxHash the user's ${f.after.txIsUsers}/${f.routes}, distinct clients ${f.after.distinctClients}; GET sets [${f.after.sets.join(', ')}]`,
    `funding moment from a routeId (candidates: source deposits in the window before the moment; guess: the latest):`,
    `  before (public view's BRIDGING_IN at the next exit epoch; window ${e.windows.before} s): ${score(e.before)}`,
    `  after (the route's own delay first, observed every 0.5 s; window ${e.windows.after} s): ${score(e.after)}`,
    `  webhook receiver's first arrival (after; window ${e.windows.webhook} s): ${score(e.webhook)}`,
    `client stream timing (an observer of the user's connection; the last data it carried → the payouts before it; guess: the latest):`,
    `  before (transport 'auto', SSE: a frame per status, the stream ends at COMPLETED; window ${r.clientStream.windows.sse} s): ${score(r.clientStream.sse)}`,
    `  after (transport 'quiet', the default: padded reads every ${QUIET_PERIOD_MS / 1000} s, on for up to ${QUIET_AFTER_END_MS / 1000} s after the end; window ${r.clientStream.windows.quiet} s): ${score(r.clientStream.quiet)}`,
  ].join('\n')}\n`;
}
