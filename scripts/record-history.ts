/**
 * Records the Temporal history of one funded transfer on a fresh local stack, for the replay test
 * (test/workflow/replay.test.ts). Run it after changing the workflow, with a label for the new recording:
 *
 *   node --import tsx scripts/record-history.ts <label> [relay|cctp] [--park <operation>] [--webhook <label>] [--min-set N]
 *
 * It writes test/workflow/histories/<workflow type>-<label>.history, named after the workflow type the history
 * holds (read from its first event), so `6-relay` becomes `transferWorkflowV2-6-relay.history`. The label numbers
 * the recordings of that type, oldest first, and says what was recorded (the replay test checks the type).
 *
 * `--min-set N` asks for an anonymity set the lone transfer never reaches: it leaves at its longest wait
 * (PRIVACY_MAX_WAIT_SECONDS, 20 s on the local stack).
 *
 * `--park bridge-out` (or another fault of `routectl devnet fault set`) makes that step fail until the
 * transfer parks, then clears the fault and runs the operator's `routectl retry`: the shape of a parked
 * transfer that an operator resumed, which is what lives longest in production.
 *
 * `--webhook <label>` gives the transfer a webhookUrl (a receiver in this process) and also records the
 * webhookDelivery workflow of its COMPLETED event as test/workflow/histories/webhookDelivery-<label>.history.
 *
 * Commit the new files (binary protobuf: this Temporal SDK's JSON helpers fail on
 * its own mixed protobufjs versions): every recorded history must keep replaying with the current
 * workflow code, which is what makes a change to the workflow's commands safe for transfers in flight.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { connectDatabase } from '../src/db/client.ts';
import { transfers } from '../src/db/schema.ts';
import { createApiKey } from '../src/partners/apiKeys.ts';
import { webhookWorkflowId } from '../src/webhooks/settings.ts';
import proto from '@temporalio/proto';
import { startTestStack, waitFor } from '../test/support/testStack.ts';

const args = process.argv.slice(2);
const option = (flag: string) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);
const parkAt = option('--park');
const webhookLabel = option('--webhook');
const minSet = option('--min-set');
const [label, mode = 'relay'] = args.filter((arg, i) => !arg.startsWith('--') && !args[i - 1]?.startsWith('--'));
const validName = (n: string | undefined) => !!n && /^[\w.-]+$/.test(n);
if (
  !validName(label) ||
  !['relay', 'cctp'].includes(mode) ||
  (args.includes('--park') && !parkAt) ||
  (args.includes('--webhook') && !validName(webhookLabel)) ||
  (args.includes('--min-set') && !/^\d+$/.test(minSet ?? ''))
) {
  console.error('usage: record-history.ts <label> [relay|cctp] [--park <operation>] [--webhook <label>] [--min-set N]');
  process.exit(2);
}

// The webhook receiver: answers 204 to every delivery.
const receiver = createServer((request, response) => {
  request.resume();
  request.on('end', () => response.writeHead(204).end());
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const webhookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

const parking: Record<string, string> = parkAt ? { STEP_MAX_ATTEMPTS: '2', STEP_TIME_BUDGET_SECONDS: '60' } : {};
// Recorded in clear: the committed histories replay without a key (the stack's key is fresh each run).
const stack = await startTestStack({ env: { BRIDGE_PROVIDER: mode, PAYLOAD_CODEC: 'off', ...parking } });
try {
  const chainId = (role: string) => stack.manifest.chains.find((c) => c.role === role)!.chainId;
  // Webhooks need an API key (docs/api.md, "Webhooks").
  const keyHeaders: Record<string, string> = webhookLabel ? { 'X-Api-Key': (await createApiKey(stack.service.db, 'record-history')).key } : {};
  const created = await stack.api<{ routeId: string; depositAddress: `0x${string}`; amount: string }>(
    'POST',
    '/api/private-route',
    {
      sourceChainId: chainId('source'),
      destChainId: chainId('destination'),
      amount: '42',
      userDestinationAddress: '0x000000000000000000000000000000000000bEEF',
      ...(webhookLabel && { webhookUrl }),
      ...(minSet && { minAnonymitySet: Number(minSet) }),
    },
    keyHeaders,
  );
  const route = created.body.data!;
  if (parkAt) await expectOk(stack.routectl('devnet', 'fault', 'set', parkAt));
  await stack.fund(route.depositAddress, 'USDC', BigInt(route.amount));
  if (parkAt) {
    await waitFor(
      'the transfer to park',
      async () => {
        const { body } = await stack.api<{ needsAttention: boolean }>('GET', `/api/private-route/${route.routeId}`);
        return body.data?.needsAttention ? true : undefined;
      },
      180_000,
    );
    await expectOk(stack.routectl('devnet', 'fault', 'clear'));
    await expectOk(stack.routectl('retry', route.routeId, '--reason', 'recording a parked-retry history'));
  }
  const status = await waitFor(
    'the transfer to finish',
    async () => {
      const { body } = await stack.api<{ status: string }>('GET', `/api/private-route/${route.routeId}`);
      return ['COMPLETED', 'FAILED'].includes(body.data!.status) ? body.data!.status : undefined;
    },
    180_000,
  );
  if (status !== 'COMPLETED') throw new Error(`the transfer ended ${status}`);
  writeHistory(await stack.temporal.client.workflow.getHandle(route.routeId).fetchHistory(), label!);
  if (webhookLabel) {
    const seq = await completedSeq(route.routeId);
    const delivery = stack.temporal.client.workflow.getHandle(webhookWorkflowId(`${route.routeId}:${seq}`));
    await delivery.result();
    writeHistory(await delivery.fetchHistory(), webhookLabel);
  }
} finally {
  await stack.close();
  receiver.close();
}

/** Writes test/workflow/histories/<workflow type>-<label>.history. */
function writeHistory(history: proto.temporal.api.history.v1.IHistory, label: string): void {
  const workflowType = history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name;
  if (!workflowType) throw new Error('the history does not start with WorkflowExecutionStarted');
  const file = new URL(`../test/workflow/histories/${workflowType}-${label}.history`, import.meta.url);
  writeFileSync(file, proto.temporal.api.history.v1.History.encode(history).finish());
  console.log(`wrote ${file.pathname} (${history.events?.length} events)`);
}

/** The COMPLETED status's sequence number, from the projection. */
async function completedSeq(routeId: string): Promise<number> {
  const database = connectDatabase(stack.config.DATABASE_URL, { max: 1 });
  try {
    const [row] = await database.db.select({ seq: transfers.statusSeq }).from(transfers).where(eq(transfers.routeId, routeId));
    if (!row) throw new Error(`no projection row for ${routeId}`);
    return row.seq;
  } finally {
    await database.close();
  }
}

async function expectOk(run: Promise<{ code: number; stdout: string; stderr: string }>): Promise<void> {
  const { code, stdout, stderr } = await run;
  if (code !== 0) throw new Error(`routectl exited ${code}: ${stderr || stdout}`);
}
