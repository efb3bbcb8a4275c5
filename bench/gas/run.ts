/**
 * Gas the service pays per route: every transaction it sent for `--routes` completed routes on the local stack,
 * grouped by step, with the gas it used, the least gas any transaction carrying the same calldata could use (the
 * intrinsic gas: 21,000 + the calldata's bytes) and what the quotes charge for that step (src/quote/gasCost.ts):
 * a budget for the transactions the service's accounts send, a top-up's value for a per-route account, whose own
 * transactions spend it. Flagged: a send above its budget (the quotes undercharge it), a step's per-route
 * transactions above the gas a top-up is sized for (ROUTE_ACCOUNT_GAS_PER_STEP: the top-up's headroom for rising
 * fees is being used up).
 *
 *   npm run bench:gas -- [--mode relay|cctp|both] [--routes 3] [--json]
 */
import { parseArgs } from 'node:util';
import { inArray } from 'drizzle-orm';
import { createPublicClient, http, type Hex, type PublicClient } from 'viem';
import { txIntents } from '../../src/db/schema.ts';
import { ROUTE_ACCOUNT_GAS_PER_STEP, STEP_GAS, stepKind, type BridgeMode } from '../../src/quote/gasCost.ts';
import { max, median, positiveInt, runMain, table } from '../support/figures.ts';
import { MIN_PRIVACY_WINDOW_ENV, awaitTerminal, createTransfer, faucetFunder, progress, startBenchStack } from '../support/stack.ts';

const { values } = parseArgs({
  options: {
    mode: { type: 'string', default: 'both' },
    routes: { type: 'string', default: '3' },
    json: { type: 'boolean', default: false },
  },
});
const routes = positiveInt(values.routes, '--routes');
const modes: BridgeMode[] = values.mode === 'both' ? ['relay', 'cctp'] : [values.mode as BridgeMode];
if (!modes.every((m) => m === 'relay' || m === 'cctp')) {
  console.error('--mode must be relay, cctp or both');
  process.exit(2);
}

/** Intrinsic gas of a transaction with this calldata (no access list, no contract creation). */
export function intrinsicGas(input: Hex): bigint {
  let gas = 21_000n;
  for (let i = 2; i < input.length; i += 2) gas += input.slice(i, i + 2) === '00' ? 4n : 16n;
  return gas;
}

interface StepFigures {
  mode: BridgeMode;
  step: string;
  chain: string;
  transactions: number;
  medianGasUsed: number;
  maxGasUsed: number;
  intrinsicGas: number;
  /** What the quotes charge: gas units, 0 for a per-route account's transaction (its top-up pays), null when unlisted. */
  quotedEstimate: number | null;
  /** Per route, the gas of all its transactions of this step (a per-route account's step: what its top-up must cover). */
  perRouteGas: number;
}

runMain(async () => {
  const results: StepFigures[] = [];
  for (const mode of modes) {
    progress(`starting the local stack (${mode} mode)`);
    const bench = await startBenchStack({ env: { ...MIN_PRIVACY_WINDOW_ENV, BRIDGE_PROVIDER: mode } });
    try {
      const { stack } = bench;
      const funder = faucetFunder(stack);
      const created = [];
      for (let i = 0; i < routes; i++) created.push(await createTransfer(stack, String(25 + i)));
      for (const t of created) await funder.fund(t);
      const outcomes = await awaitTerminal(
        stack,
        created.map((t) => t.routeId),
        { timeoutSeconds: 600, progress },
      );
      const failed = [...outcomes].filter(([, o]) => o.status !== 'COMPLETED');
      if (failed.length > 0) throw new Error(`routes did not complete: ${failed.map(([id, o]) => `${id} ${o.status} ${o.error ?? ''}`).join('; ')}`);

      const chains = new Map(stack.manifest.chains.map((c) => [c.chainId, c]));
      const clients = new Map<number, PublicClient>();
      const clientOf = (chainId: number) => {
        let client = clients.get(chainId);
        if (!client) clients.set(chainId, (client = createPublicClient({ transport: http(chains.get(chainId)!.rpcUrl) }) as PublicClient));
        return client;
      };
      const intents = await stack.service.db
        .select()
        .from(txIntents)
        .where(
          inArray(
            txIntents.routeId,
            created.map((t) => t.routeId),
          ),
        );
      const byStep = new Map<string, { chain: string; used: bigint[]; intrinsic: bigint[] }>();
      const perRoute = new Map<string, bigint>();
      for (const intent of intents.filter((i) => i.status === 'mined')) {
        const hash = (intent.minedTxHash ?? intent.txHash) as Hex;
        const [receipt, tx] = await Promise.all([clientOf(intent.chainId).getTransactionReceipt({ hash }), clientOf(intent.chainId).getTransaction({ hash })]);
        const kind = stepKind(intent.step);
        const entry = byStep.get(kind) ?? { chain: chains.get(intent.chainId)?.role ?? String(intent.chainId), used: [], intrinsic: [] };
        entry.used.push(receipt.gasUsed);
        const routeKey = `${kind}|${intent.routeId}`;
        perRoute.set(routeKey, (perRoute.get(routeKey) ?? 0n) + receipt.gasUsed);
        entry.intrinsic.push(intrinsicGas(tx.input));
        byStep.set(kind, entry);
      }
      for (const [step, entry] of [...byStep].sort(([a], [b]) => a.localeCompare(b))) {
        const used = entry.used.map(Number);
        results.push({
          mode,
          step,
          chain: entry.chain,
          transactions: used.length,
          medianGasUsed: median(used),
          maxGasUsed: max(used),
          intrinsicGas: median(entry.intrinsic.map(Number)),
          quotedEstimate: STEP_GAS[mode].find((s) => s.step === step)?.gas ?? null,
          perRouteGas: max([...perRoute].filter(([key]) => key.startsWith(`${step}|`)).map(([, gas]) => Number(gas))),
        });
      }
    } finally {
      await bench.close();
    }
  }
  if (values.json) {
    console.log(JSON.stringify(results, null, 2));
    return;
  }
  const topUpSized = Number(ROUTE_ACCOUNT_GAS_PER_STEP);
  const verdict = (r: StepFigures) => {
    if (r.quotedEstimate === null) return 'NOT IN THE QUOTES';
    if (r.quotedEstimate === 0) return r.perRouteGas > topUpSized ? `TOP-UP HEADROOM USED (${r.perRouteGas} > ${topUpSized} per route)` : '';
    return r.maxGasUsed > r.quotedEstimate ? 'UNDERCHARGED' : '';
  };
  console.log(`gas per step, ${routes} completed route(s) per mode`);
  console.log(
    table([
      ['mode', 'step', 'chain', 'txs', 'median gas used', 'max gas used', 'intrinsic (least possible)', 'quoted', ''],
      ...results.map((r) => [
        r.mode,
        r.step,
        r.chain,
        r.transactions,
        r.medianGasUsed,
        r.maxGasUsed,
        r.intrinsicGas,
        r.quotedEstimate === null ? '(none)' : r.quotedEstimate === 0 ? 'from top-up' : r.quotedEstimate,
        verdict(r),
      ]),
    ]),
  );
  for (const mode of modes) {
    const rows = results.filter((r) => r.mode === mode);
    const used = rows.reduce((sum, r) => sum + r.medianGasUsed, 0);
    const charged = rows.reduce((sum, r) => sum + (r.quotedEstimate ?? 0), 0);
    console.log(`${mode}: ${used} gas used per route (sum of the step medians); the quotes charge ${charged} gas-equivalents (top-up values included)`);
  }
});
