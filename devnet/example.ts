/**
 * `npm run example`: the README's TypeScript example, run against the local stack (`npm start` in another
 * terminal). It quotes, creates (idempotently), funds the deposit address from the devnet faucet — the step a
 * real sender does with their wallet — and follows the transfer over Server-Sent Events until it completes.
 */
import { createPrivateRouteClient } from 'private-route/client';
import { dataDir } from '../src/cli/context.ts';
import { fund } from './cli.ts';
import { readStackInfo } from './stackInfo.ts';

const { apiUrl, manifest } = readStackInfo(dataDir());
const chainOf = (role: string) => manifest.chains.find((chain) => chain.role === role)!.chainId;

const client = createPrivateRouteClient({ baseUrl: apiUrl });
const request = { sourceChainId: chainOf('source'), destChainId: chainOf('destination'), amount: '100', destTokenSymbol: process.argv[2] ?? 'WETH' };
const quote = await client.quote(request);
console.log(`quote: ${request.amount} USDC → ${quote.quotedOutputAmount} (smallest units of ${quote.destSymbol}), about ${quote.etaSeconds} s`);
const route = await client.create({ ...request, userDestinationAddress: '0x000000000000000000000000000000000000bEEF' });
console.log(`created ${route.routeId}: deposit ${request.amount} USDC to ${route.depositAddress}`);
await fund(route.routeId, undefined);
const done = await client.waitForCompletion(route.routeId, { statusToken: route.statusToken, onStatus: (t) => console.log(`  ${t.status}`) });
console.log(`paid ${done.quotedOutputAmount} to the recipient; anonymity set ${done.privacy?.anonymitySet ?? 'n/a'}`);
