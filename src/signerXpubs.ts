/**
 * `npm run signer:xpubs [-- --addresses N]` (node dist/src/signerXpubs.js in a deployment of the build): the API's configuration from the signer's mnemonic. Reads
 * SIGNER_MNEMONIC from the environment (or, when unset, one line on stdin) and prints the deposit and hub xpubs
 * as environment lines for the API (never the exit one: it would tie withdrawals to deposits), then the first N
 * route addresses of each role so they can be compared with the worker's. Run it where the mnemonic already is
 * (the signer's host); the xpubs are no keys, but they pair every route's deposit and hub addresses: hand them to
 * the API's secret store, not to a ticket.
 */
import { createInterface } from 'node:readline';
import { createRouteAddressBook, createRouteKeyring, ROUTE_ACCOUNT_ROLES } from './accounts/routeAccounts.ts';

async function readMnemonic(): Promise<string> {
  if (process.env.SIGNER_MNEMONIC) return process.env.SIGNER_MNEMONIC;
  if (process.stdin.isTTY) process.stderr.write('SIGNER_MNEMONIC (one line, not echoed to any log): ');
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    lines.close();
    return line;
  }
  return '';
}

const countArg = process.argv.indexOf('--addresses');
const count = countArg >= 0 ? Number(process.argv[countArg + 1]) : 3;
if (!Number.isInteger(count) || count < 0 || count > 1000) {
  process.stderr.write('--addresses takes a whole number from 0 to 1000\n');
  process.exit(2);
}
const mnemonic = await readMnemonic();
if (mnemonic.trim().split(/\s+/).length < 12) {
  process.stderr.write('SIGNER_MNEMONIC must be a BIP-39 mnemonic of at least 12 words\n');
  process.exit(2);
}
const xpubs = createRouteKeyring(mnemonic).xpubs();
const book = createRouteAddressBook(xpubs);
const out = [
  '# The API takes these two (docs/operations.md, "Keys and the signer"). The exit role\'s xpub is never given to',
  "# the API: next to these it would tie every route's withdrawal to its deposit.",
  `DEPOSIT_ACCOUNT_XPUB=${xpubs.deposit}`,
  `HUB_ACCOUNT_XPUB=${xpubs.hub}`,
  ...(count > 0
    ? ['', `# Route addresses (role key × tweak of the index: docs/security.md; index 0 is the fingerprint the API and the worker compare; routes start at 1):`]
    : []),
  ...Array.from({ length: count }, (_, i) => {
    const addresses = book.routeAddresses(i);
    return `#   ${String(i).padStart(4)}  ${ROUTE_ACCOUNT_ROLES.map((role) => `${role} ${addresses[role]}`).join('  ')}`;
  }),
];
process.stdout.write(`${out.join('\n')}\n`);
