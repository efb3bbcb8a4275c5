/**
 * Temporal actions and history events per transfer: runs K transfers to COMPLETED on the local stack with the
 * privacy window at its minimum, then reads each transfer's workflow history (workflow id = routeId) and
 * counts Temporal Cloud billable Actions from it (rules in ./count.ts), plus an estimate of the heartbeats.
 *
 *   npm run bench:actions -- [--transfers 3] [--mode relay|cctp] [--timeout 300] [--small] [--json]
 */
import { parseArgs } from 'node:util';
import { max, mean, positiveInt, round, runMain, table } from '../support/figures.ts';
import { MIN_PRIVACY_WINDOW_ENV, awaitTerminal, createTransfer, faucetFunder, progress, startBenchStack } from '../support/stack.ts';
import { KEEPALIVE_SECONDS, countActions, type ActionCount } from './count.ts';

const { values } = parseArgs({
  options: {
    transfers: { type: 'string', default: '3' },
    mode: { type: 'string', default: 'relay' },
    timeout: { type: 'string', default: '300' },
    small: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const transfers = values.small ? 1 : positiveInt(values.transfers, '--transfers');
const timeoutSeconds = positiveInt(values.timeout, '--timeout');
const mode = values.mode;
if (mode !== 'relay' && mode !== 'cctp') {
  console.error('--mode must be relay or cctp');
  process.exit(2);
}

runMain(async () => {
  progress(`starting the local stack (${mode} mode, privacy window at its minimum)`);
  const bench = await startBenchStack({ env: { ...MIN_PRIVACY_WINDOW_ENV, BRIDGE_PROVIDER: mode } });
  try {
    const { stack } = bench;
    const funder = faucetFunder(stack);
    const created = [];
    for (let i = 0; i < transfers; i++) created.push(await createTransfer(stack));
    for (const t of created) await funder.fund(t);
    progress(`created and funded ${transfers} transfer(s); waiting for COMPLETED (at most ${timeoutSeconds} s)`);
    const outcomes = await awaitTerminal(
      stack,
      created.map((t) => t.routeId),
      { timeoutSeconds, progress },
    );
    const notCompleted = created.filter((t) => outcomes.get(t.routeId)?.status !== 'COMPLETED');
    if (notCompleted.length > 0) {
      throw new Error(
        `${notCompleted.length} transfer(s) did not complete within ${timeoutSeconds} s: ${notCompleted.map((t) => `${t.routeId} ${outcomes.get(t.routeId)?.status} ${outcomes.get(t.routeId)?.error ?? ''}`).join('; ')}`,
      );
    }

    const client = stack.temporal.client;
    const perTransfer: Array<{ routeId: string; count: ActionCount }> = [];
    for (const t of created) {
      const history = await client.workflow.getHandle(t.routeId).fetchHistory();
      perTransfer.push({ routeId: t.routeId, count: countActions(history.events ?? []) });
    }

    // Workflows that are not a transfer (stray scanner, watchers): their cost is shared by all routes.
    const routeIds = new Set(created.map((t) => t.routeId));
    const shared = new Map<string, { executions: number; actions: number; events: number }>();
    for await (const execution of client.workflow.list()) {
      if (routeIds.has(execution.workflowId)) continue;
      const history = await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
      const count = countActions(history.events ?? []);
      const row = shared.get(execution.type) ?? { executions: 0, actions: 0, events: 0 };
      shared.set(execution.type, {
        executions: row.executions + 1,
        actions: row.actions + count.actions + count.estimatedHeartbeats,
        events: row.events + count.events,
      });
    }

    report(perTransfer, shared);
  } finally {
    await bench.close();
  }
});

function report(perTransfer: Array<{ routeId: string; count: ActionCount }>, shared: Map<string, { executions: number; actions: number; events: number }>) {
  const totals = perTransfer.map((t) => t.count.actions + t.count.estimatedHeartbeats);
  const summary = {
    mode,
    transfers: perTransfer.length,
    actionsPerTransfer: { mean: round(mean(totals), 1), max: max(totals) },
    actionsWithoutHeartbeats: { mean: round(mean(perTransfer.map((t) => t.count.actions)), 1), max: max(perTransfer.map((t) => t.count.actions)) },
    estimatedHeartbeats: { mean: round(mean(perTransfer.map((t) => t.count.estimatedHeartbeats)), 1) },
    historyEvents: { mean: round(mean(perTransfer.map((t) => t.count.events)), 1), max: max(perTransfer.map((t) => t.count.events)) },
    perTransfer: perTransfer.map((t) => ({
      routeId: t.routeId,
      events: t.count.events,
      actions: t.count.actions,
      estimatedHeartbeats: t.count.estimatedHeartbeats,
      actionsByRule: Object.fromEntries(t.count.actionsByRule),
      eventsByType: Object.fromEntries(t.count.eventsByType),
      activityAttempts: Object.fromEntries(t.count.activityAttempts),
      notBilled: Object.fromEntries(t.count.notBilled),
    })),
    sharedWorkflows: Object.fromEntries(shared),
  };
  if (values.json) {
    console.log(JSON.stringify(summary, null, 2));
    return;
  }
  const ids = perTransfer.map((_, i) => `#${i + 1}`);
  const rows = (pick: (c: ActionCount) => Map<string, number>) => {
    const keys = [...new Set(perTransfer.flatMap((t) => [...pick(t.count).keys()]))].sort();
    return keys.map((k) => [k, ...perTransfer.map((t) => pick(t.count).get(k) ?? 0)]);
  };
  console.log(`Temporal actions per transfer (${mode} mode, ${perTransfer.length} transfer(s), privacy window at its minimum)\n`);
  console.log(
    table([
      ['billable action (from the history)', ...ids],
      ...rows((c) => c.actionsByRule),
      ['activity heartbeats (estimate, not in the history)', ...perTransfer.map((t) => t.count.estimatedHeartbeats)],
      ['total', ...totals],
    ]),
  );
  const notBilled = rows((c) => c.notBilled);
  if (notBilled.length > 0) console.log(`\nnot billed:\n${table(notBilled)}`);
  console.log(`\n${table([['history events by type', ...ids], ...rows((c) => c.eventsByType), ['total', ...perTransfer.map((t) => t.count.events)]])}`);
  console.log(`\n${table([['activity attempts by type', ...ids], ...rows((c) => c.activityAttempts)])}`);
  console.log(
    `\nactions per transfer: mean ${summary.actionsPerTransfer.mean}, max ${summary.actionsPerTransfer.max} (of which heartbeats ≈ ${summary.estimatedHeartbeats.mean}; without them mean ${summary.actionsWithoutHeartbeats.mean}, max ${summary.actionsWithoutHeartbeats.max})`,
  );
  console.log(`history events per transfer: mean ${summary.historyEvents.mean}, max ${summary.historyEvents.max}`);
  if (shared.size > 0) {
    console.log(`\nother workflows during the run (shared by all routes; actions incl. estimated heartbeats):`);
    console.log(table([['type', 'executions', 'actions', 'events'], ...[...shared].map(([type, r]) => [type, r.executions, r.actions, r.events])]));
  }
  console.log(
    `\nHeartbeats are estimated: ≈ 1 + floor((d − ${KEEPALIVE_SECONDS} s) / 8 s) per activity attempt of d ≥ ${KEEPALIVE_SECONDS} s (keep-alive every ${KEEPALIVE_SECONDS} s, SDK throttle 80 % of the 10 s timeout).`,
  );
}
