/**
 * routectl: the operator's and developer's command line.
 *   routectl show <routeId> [--json]         the projection, the workflow and the route's ledger
 *   routectl devnet info [--json]            local chains (chainId, rpcUrl) and token addresses
 *   routectl devnet fund <routeId> [--amount <decimal>]
 *                                            sends the route's amount of its source token to its deposit address
 * Connection: the running local stack (.data/stack.json), or DATABASE_URL / TEMPORAL_ADDRESS / API_URL.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { asc, eq } from 'drizzle-orm';
import { createPublicClient, createWalletClient, erc20Abi, http, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { connectDatabase } from '../db/client.ts';
import { ledgerEntries, transfers } from '../db/schema.ts';
import { readStackInfo, type StackInfo } from '../devnet/stack.ts';
import { formatAmount, parseAmount } from '../money/amount.ts';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

class UsageError extends Error {}

const USAGE = `usage:
  routectl show <routeId> [--json]
  routectl devnet info [--json]
  routectl devnet fund <routeId> [--amount <decimal>]`;

function stackInfo(): StackInfo {
  return readStackInfo(path.resolve(repoRoot, process.env.DATA_DIR ?? '.data'));
}

function connections() {
  const local = process.env.DATABASE_URL && process.env.TEMPORAL_ADDRESS ? null : stackInfo();
  return {
    databaseUrl: process.env.DATABASE_URL ?? local!.databaseUrl,
    temporalAddress: process.env.TEMPORAL_ADDRESS ?? local!.temporalAddress,
    temporalNamespace: process.env.TEMPORAL_NAMESPACE ?? local?.temporalNamespace ?? 'default',
    apiUrl: process.env.API_URL ?? local?.apiUrl ?? 'http://127.0.0.1:3000',
  };
}

const print = (value: unknown): void => {
  process.stdout.write(`${typeof value === 'string' ? value : JSON.stringify(value, null, 2)}\n`);
};

async function show(routeId: string, json: boolean): Promise<void> {
  const conn = connections();
  const database = connectDatabase(conn.databaseUrl, { max: 1 });
  try {
    const [row] = await database.db.select().from(transfers).where(eq(transfers.routeId, routeId));
    if (!row) throw new UsageError(`unknown route ${routeId}`);
    const ledger = await database.db.select().from(ledgerEntries).where(eq(ledgerEntries.routeId, routeId)).orderBy(asc(ledgerEntries.id));
    const connection = await Connection.connect({ address: conn.temporalAddress });
    let workflow: { status: string; runId: string; startTime: string } | { error: string };
    try {
      const description = await new Client({ connection, namespace: conn.temporalNamespace }).workflow.getHandle(routeId).describe();
      workflow = { status: description.status.name, runId: description.runId, startTime: description.startTime.toISOString() };
    } catch (error) {
      workflow = { error: error instanceof Error ? error.message : String(error) };
    } finally {
      await connection.close();
    }
    if (json) return print({ transfer: row, workflow, ledger });
    print(`route       ${row.routeId}`);
    print(`status      ${row.status}${row.error ? `  (${row.error})` : ''}`);
    print(`workflow    ${'status' in workflow ? `${workflow.status} since ${workflow.startTime}` : workflow.error}`);
    print(`amount      ${formatAmount(BigInt(row.amount), row.sourceDecimals)} ${row.symbol} on ${row.sourceChainId} -> ${formatAmount(BigInt(row.quotedOutputAmount), row.destDecimals)} ${row.destSymbol} on ${row.destChainId}`);
    print(`deposit     ${row.depositAddress} (deadline ${row.depositDeadline.toISOString()})`);
    print(`hub         ${row.hubAccount}   exit ${row.exitAccount}`);
    print(`recipient   ${row.userDestinationAddress}`);
    if (row.payoutTxHash) print(`payout tx   ${row.payoutTxHash}`);
    print('ledger:');
    for (const entry of ledger) print(`  ${entry.kind.padEnd(15)} ${entry.amount.padStart(24)}  chain ${entry.chainId}  ${entry.txHash ?? ''}`);
  } finally {
    await database.close();
  }
}

function devnetInfo(json: boolean): void {
  const { manifest } = stackInfo();
  if (json) {
    print(manifest.chains.map(({ role, chainId, name, rpcUrl, tokens }) => ({ role, chainId, name, rpcUrl, tokens })));
    return;
  }
  for (const chain of manifest.chains) {
    print(`${chain.displayName} (${chain.role})  chainId ${chain.chainId}  ${chain.rpcUrl}`);
    for (const token of chain.tokens) print(`  ${token.symbol.padEnd(6)} ${token.address}  ${token.decimals} decimals`);
  }
}

async function devnetFund(routeId: string, amountText: string | undefined): Promise<void> {
  const { manifest } = stackInfo();
  const { apiUrl } = connections();
  const response = await fetch(`${apiUrl}/api/private-route/${encodeURIComponent(routeId)}`);
  const body = (await response.json()) as { success: boolean; error?: string; data?: { depositAddress: Address; amount: string; symbol: string; sourceChainId: number } };
  if (!body.success || !body.data) throw new UsageError(body.error ?? `route ${routeId} not found`);
  const route = body.data;
  const chain = manifest.chains.find((c) => c.chainId === route.sourceChainId);
  const token = chain?.tokens.find((t) => t.symbol === route.symbol);
  if (!chain || !token) throw new UsageError(`route ${routeId} is not on a local devnet chain (source chain ${route.sourceChainId})`);
  const amount = amountText === undefined ? BigInt(route.amount) : parseAmount(amountText, token.decimals, '--amount');

  const account = privateKeyToAccount(manifest.faucetPrivateKey);
  const transport = http(chain.rpcUrl);
  const wallet = createWalletClient({ account, transport });
  const client = createPublicClient({ transport, pollingInterval: 200 });
  const hash = await wallet.writeContract({ chain: null, address: token.address, abi: erc20Abi, functionName: 'transfer', args: [route.depositAddress, amount] });
  const receipt = await client.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error(`funding transaction ${hash} reverted`);
  print(`sent ${formatAmount(amount, token.decimals)} ${token.symbol} to ${route.depositAddress} on ${chain.displayName} (tx ${hash})`);
}

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false }, amount: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  const [command, sub, arg] = positionals;
  if (values.help || !command) return print(USAGE);
  if (command === 'show' && sub) return show(sub, values.json);
  if (command === 'devnet' && sub === 'info') return devnetInfo(values.json);
  if (command === 'devnet' && sub === 'fund' && arg) return devnetFund(arg, values.amount);
  throw new UsageError(USAGE);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`routectl: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = error instanceof UsageError ? 2 : 1;
});
