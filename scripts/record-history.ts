/**
 * Records the Temporal history of one funded transfer on a fresh local stack, for the replay test
 * (test/replay.test.ts). Run it after changing the workflow, with the new version's name:
 *
 *   node --import tsx scripts/record-history.ts <name> [relay|cctp] [--park <operation>]
 *
 * `--park bridge-out` (or another fault of `routectl devnet fault set`) makes that step fail until the
 * transfer parks, then clears the fault and runs the operator's `routectl retry`: the shape of a parked
 * transfer that an operator resumed, which is what lives longest in production.
 *
 * and commit test/histories/<name>.history (binary protobuf: this Temporal SDK's JSON helpers fail on
 * its own mixed protobufjs versions): every recorded history must keep replaying with the current
 * workflow code, which is what makes a change to the workflow's commands safe for transfers in flight.
 */
import { writeFileSync } from 'node:fs';
import proto from '@temporalio/proto';
import { startTestStack, waitFor } from '../test/support/testStack.ts';

const args = process.argv.slice(2);
const parkAt = args.includes('--park') ? args[args.indexOf('--park') + 1] : undefined;
const [name, mode = 'relay'] = args.filter((arg, i) => arg !== '--park' && args[i - 1] !== '--park');
if (!name || !/^[\w.-]+$/.test(name) || !['relay', 'cctp'].includes(mode) || (args.includes('--park') && !parkAt)) {
  console.error('usage: record-history.ts <name> [relay|cctp] [--park <operation>]');
  process.exit(2);
}

const parking: Record<string, string> = parkAt ? { STEP_MAX_ATTEMPTS: '2', STEP_TIME_BUDGET_SECONDS: '60' } : {};
// Recorded in clear: the committed histories replay without a key (the stack's key is fresh each run).
const stack = await startTestStack({ env: { BRIDGE_PROVIDER: mode, PAYLOAD_CODEC: 'off', ...parking } });
try {
  const chainId = (role: string) => stack.manifest.chains.find((c) => c.role === role)!.chainId;
  const created = await stack.api<{ routeId: string; depositAddress: `0x${string}`; amount: string }>('POST', '/api/private-route', {
    sourceChainId: chainId('source'),
    destChainId: chainId('destination'),
    amount: '42',
    userDestinationAddress: '0x000000000000000000000000000000000000bEEF',
  });
  const route = created.body.data!;
  if (parkAt) await expectOk(stack.routectl('devnet', 'fault', 'set', parkAt));
  await stack.fund(route.depositAddress, 'USDC', BigInt(route.amount));
  if (parkAt) {
    await waitFor('the transfer to park', async () => {
      const { body } = await stack.api<{ needsAttention: boolean }>('GET', `/api/private-route/${route.routeId}`);
      return body.data?.needsAttention ? true : undefined;
    }, 180_000);
    await expectOk(stack.routectl('devnet', 'fault', 'clear'));
    await expectOk(stack.routectl('retry', route.routeId, '--reason', 'recording a parked-retry history'));
  }
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

async function expectOk(run: Promise<{ code: number; stdout: string; stderr: string }>): Promise<void> {
  const { code, stdout, stderr } = await run;
  if (code !== 0) throw new Error(`routectl exited ${code}: ${stderr || stdout}`);
}
