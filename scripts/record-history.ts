/**
 * Records the Temporal history of one funded transfer on a fresh local stack, for the replay test
 * (test/replay.test.ts). Run it after changing the workflow, with the new version's name:
 *
 *   node --import tsx scripts/record-history.ts <name> [relay|cctp]
 *
 * and commit test/histories/<name>.history (binary protobuf: this Temporal SDK's JSON helpers fail on
 * its own mixed protobufjs versions): every recorded history must keep replaying with the current
 * workflow code, which is what makes a change to the workflow's commands safe for transfers in flight.
 */
import { writeFileSync } from 'node:fs';
import proto from '@temporalio/proto';
import { startTestStack, waitFor } from '../test/support/testStack.ts';

const [name, mode = 'relay'] = process.argv.slice(2);
if (!name || !/^[\w.-]+$/.test(name) || !['relay', 'cctp'].includes(mode)) {
  console.error('usage: record-history.ts <name> [relay|cctp]');
  process.exit(2);
}

const stack = await startTestStack({ env: { BRIDGE_PROVIDER: mode } });
try {
  const chainId = (role: string) => stack.manifest.chains.find((c) => c.role === role)!.chainId;
  const created = await stack.api<{ routeId: string; depositAddress: `0x${string}`; amount: string }>('POST', '/api/private-route', {
    sourceChainId: chainId('source'),
    destChainId: chainId('destination'),
    amount: '42',
    userDestinationAddress: '0x000000000000000000000000000000000000bEEF',
  });
  const route = created.body.data!;
  await stack.fund(route.depositAddress, 'USDC', BigInt(route.amount));
  const status = await waitFor('the transfer to finish', async () => {
    const { body } = await stack.api<{ status: string }>('GET', `/api/private-route/${route.routeId}`);
    return ['COMPLETED', 'FAILED'].includes(body.data!.status) ? body.data!.status : undefined;
  }, 180_000);
  if (status !== 'COMPLETED') throw new Error(`the transfer ended ${status}`);
  const history = await stack.temporal.client.workflow.getHandle(route.routeId).fetchHistory();
  const file = new URL(`../test/histories/${name}.history`, import.meta.url);
  writeFileSync(file, proto.temporal.api.history.v1.History.encode(history).finish());
  console.log(`wrote ${file.pathname} (${history.events?.length} events)`);
} finally {
  await stack.close();
}
