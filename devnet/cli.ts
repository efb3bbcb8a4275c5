import type { Address } from 'viem';
import { eq } from 'drizzle-orm';
import { connectDatabase } from '../src/db/client.ts';
import { transfers } from '../src/db/schema.ts';
import { faultOperations } from './emulators/faults.ts';
import { formatAmount, parseAmount } from '../src/money/amount.ts';
import { parseArgs } from 'node:util';
import { CliError, connectionSettings, dataDir, print, runCommandLine, unknownRoute, usageError } from '../src/cli/context.ts';
import { sendAsNewUser } from './newSender.ts';
import { readStackInfo } from './stackInfo.ts';

/**
 * `routectl devnet …`: the local stack's own commands. bin/routectl.mjs sends `devnet` here, so routectl itself
 * (src/cli) never imports development code.
 */
const USAGE = `usage: routectl devnet <command>
  info [--json]                               local chains (chainId, rpcUrl) and token addresses
  fund <routeId> [--amount <decimal>]         send the route's amount from the devnet faucet
  fault set <op> [--count N] [--mode M]       ops: bridge-in, shield, unshield, bridge-out, asp-review (the ASP rejects deposits)
  fault clear [<op>] | fault list`;

const stackInfo = () => readStackInfo(dataDir());

export async function runDevnetCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      amount: { type: 'string' },
      count: { type: 'string' },
      mode: { type: 'string' },
      'delay-ms': { type: 'string' },
    },
  });
  const [command, first, second] = positionals;
  if (command === 'info') info(values.json);
  else if (command === 'fund' && first) await fund(first, values.amount);
  else if (command === 'fault') await fault(first, second, { count: values.count, mode: values.mode, delayMs: values['delay-ms'] });
  else if (command === 'help') process.stdout.write(`${USAGE}\n`);
  else throw usageError(USAGE);
  return 0;
}

export function info(json: boolean): void {
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

/**
 * Sends the route's amount (or --amount) of its source token from the devnet faucet to its deposit address.
 * Reads the route from the database, as the operator commands do: the API shows a deposit address only to
 * the holder of the route's statusToken.
 */
export async function fund(routeId: string, amountText: string | undefined): Promise<void> {
  const { manifest } = stackInfo();
  const database = connectDatabase(connectionSettings().databaseUrl, { max: 1 });
  let route: { depositAddress: Address; amount: string; symbol: string; sourceChainId: number };
  try {
    const [row] = await database.db
      .select({ depositAddress: transfers.depositAddress, amount: transfers.amount, symbol: transfers.symbol, sourceChainId: transfers.sourceChainId })
      .from(transfers)
      .where(eq(transfers.routeId, routeId));
    if (!row) throw unknownRoute(routeId);
    route = { ...row, depositAddress: row.depositAddress as Address };
  } finally {
    await database.close();
  }
  const chain = manifest.chains.find((c) => c.chainId === route.sourceChainId);
  const token = chain?.tokens.find((t) => t.symbol === route.symbol);
  if (!chain || !token) throw new CliError(`route ${routeId} is not on a local devnet chain (source chain ${route.sourceChainId})`, 1);
  let amount: bigint;
  try {
    amount = amountText === undefined ? BigInt(route.amount) : parseAmount(amountText, token.decimals, '--amount');
  } catch (error) {
    throw usageError(error instanceof Error ? error.message : String(error));
  }

  // From a new address each time, as a different user would send it (one sender is one client to the anonymity set).
  const { hash, receipt, sender } = await sendAsNewUser({
    rpcUrl: chain.rpcUrl,
    faucetPrivateKey: manifest.faucetPrivateKey,
    token: token.address,
    to: route.depositAddress,
    amount,
  });
  if (receipt.status !== 'success') throw new CliError(`funding transaction ${hash} reverted`, 1);
  print(`sent ${formatAmount(amount, token.decimals)} ${token.symbol} to ${route.depositAddress} on ${chain.displayName} from ${sender} (tx ${hash})`);
}

/** `devnet fault set|clear|list`: the emulators fail an operation the next N times (or until cleared). */
export async function fault(
  action: string | undefined,
  operation: string | undefined,
  opts: { count?: string; mode?: string; delayMs?: string },
): Promise<void> {
  const { relayUrl } = stackInfo();
  const endpoint = `${relayUrl}/_emulator/faults`;
  if (operation !== undefined && !(faultOperations as readonly string[]).includes(operation)) {
    throw usageError(`unknown operation ${operation}; one of ${faultOperations.join(', ')}`);
  }
  let response: Response;
  if (action === 'set') {
    if (!operation) throw usageError(`fault set needs an operation: ${faultOperations.join(', ')}`);
    const count = opts.count === undefined ? undefined : Number(opts.count);
    if (count !== undefined && !(Number.isInteger(count) && count > 0)) throw usageError('--count must be a positive integer');
    const spec = {
      operation,
      mode: opts.mode ?? (operation === 'asp-review' ? 'reject' : 'fail'),
      ...(count !== undefined && { count }),
      ...(opts.delayMs !== undefined && { delayMs: Number(opts.delayMs) }),
    };
    response = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(spec) });
  } else if (action === 'clear') {
    response = await fetch(operation ? `${endpoint}/${operation}` : endpoint, { method: 'DELETE' });
  } else if (action === 'list') {
    response = await fetch(endpoint);
  } else {
    throw usageError('usage: routectl devnet fault set <operation> [--count N] [--mode fail|refund|delay|reject] | clear [<operation>] | list');
  }
  const body = (await response.json()) as unknown;
  if (!response.ok) throw new CliError(`emulator refused: ${JSON.stringify(body)}`, 1);
  print(body);
}

/** Entry point of `routectl devnet …` (bin/routectl.mjs). */
export function main(argv: string[]): void {
  runCommandLine(() => runDevnetCommand(argv));
}
