import { createPublicClient, createWalletClient, erc20Abi, http, toHex, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';

/**
 * Sends `amount` of `token` to `to` on a local anvil chain the way a new user would: from a fresh address of its own,
 * which the faucet first funds (ETH by anvil_setBalance, the token by a transfer). The service counts one deposit
 * sender as one client in an anonymity set (src/privacy/anonymitySet.ts), so deposits all sent from the faucet
 * itself would look like one user's.
 */
export async function sendAsNewUser(opts: { rpcUrl: string; faucetPrivateKey: Hex; token: Address; to: Address; amount: bigint }) {
  const transport = http(opts.rpcUrl);
  const client = createPublicClient({ transport, pollingInterval: 100 });
  const user = privateKeyToAccount(generatePrivateKey());
  await client.request({ method: 'anvil_setBalance' as never, params: [user.address, toHex(10n ** 17n)] as never });
  const faucet = createWalletClient({ account: privateKeyToAccount(opts.faucetPrivateKey), transport });
  const funded = await faucet.writeContract({ chain: null, address: opts.token, abi: erc20Abi, functionName: 'transfer', args: [user.address, opts.amount] });
  const first = await client.waitForTransactionReceipt({ hash: funded, timeout: 60_000 });
  if (first.status !== 'success') throw new Error(`the faucet's transfer to a new sender reverted (tx ${funded})`);
  const wallet = createWalletClient({ account: user, transport });
  const hash = await wallet.writeContract({ chain: null, address: opts.token, abi: erc20Abi, functionName: 'transfer', args: [opts.to, opts.amount] });
  const receipt = await client.waitForTransactionReceipt({ hash, timeout: 60_000 });
  return { hash, receipt, sender: user.address };
}
