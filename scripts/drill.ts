/**
 * Crash drill (docs/operations.md, "Crash drill"): transfers in flight on a fresh local stack whose worker is
 * killed with SIGKILL at every crash point, with Temporal and Postgres restarted mid-flight; then every transfer
 * must be COMPLETED with exactly its quoted payout and no second payment on any chain.
 *
 *   npm run drill -- [--transfers 6] [--cctp] [--point-timeout 60] [--timeout 600] [--step-attempts 20] [--keep] [--json]
 *
 * Prints the figures on stdout (progress on stderr). Exit code 0 when every check passed, 1 otherwise.
 */
import { parseArgs } from 'node:util';
import { formatDrillReport, fullPlan, runDrill } from '../devnet/drill.ts';

function options() {
  const { values } = parseArgs({
    options: {
      transfers: { type: 'string', default: '6' },
      cctp: { type: 'boolean', default: false },
      'point-timeout': { type: 'string', default: '60' },
      timeout: { type: 'string', default: '600' },
      'step-attempts': { type: 'string', default: '20' },
      keep: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  const int = (name: string, text: string, min: number, max: number) => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be an integer from ${min} to ${max} (got "${text}")`);
    return n;
  };
  return {
    help: values.help,
    transfers: int('transfers', values.transfers, 1, 50),
    bridge: values.cctp ? ('cctp' as const) : ('relay' as const),
    pointTimeoutMs: int('point-timeout', values['point-timeout'], 5, 600) * 1000,
    finishTimeoutMs: int('timeout', values.timeout, 30, 7200) * 1000,
    stepMaxAttempts: int('step-attempts', values['step-attempts'], 1, 1000),
    keep: values.keep,
    json: values.json,
  };
}

let opts: ReturnType<typeof options>;
try {
  opts = options();
} catch (error) {
  process.stderr.write(
    `${error instanceof Error ? error.message : String(error)}\nusage: npm run drill -- [--transfers 6] [--cctp] [--point-timeout 60] [--timeout 600] [--step-attempts 20] [--keep] [--json]\n`,
  );
  process.exit(2);
}
if (opts.help) {
  process.stdout.write('usage: npm run drill -- [--transfers 6] [--cctp] [--point-timeout 60] [--timeout 600] [--step-attempts 20] [--keep] [--json]\n');
  process.exit(0);
}

// Ctrl-C: the drill stops its worker and its stack before it exits (a second Ctrl-C exits at once).
const abort = new AbortController();
process.on('SIGINT', () => {
  if (abort.signal.aborted) process.exit(130);
  process.stderr.write('[drill] stopping (Ctrl-C again to exit at once)\n');
  abort.abort();
});

const report = await runDrill({
  plan: fullPlan(opts.transfers, opts.bridge),
  bridge: opts.bridge,
  pointTimeoutMs: opts.pointTimeoutMs,
  finishTimeoutMs: opts.finishTimeoutMs,
  stepMaxAttempts: opts.stepMaxAttempts,
  keepDataDir: opts.keep,
  signal: abort.signal,
});
process.stdout.write(
  opts.json ? `${JSON.stringify(report, (_key, value) => (typeof value === 'bigint' ? value.toString() : value), 2)}\n` : `\n${formatDrillReport(report)}\n`,
);
process.exit(report.passed ? 0 : 1);
