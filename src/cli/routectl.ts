/**
 * routectl: the operator's and developer's command line. Exit codes: 0 ok, 1 failure,
 * 2 usage, 3 unknown route, 4 not allowed in the route's current state.
 * Connection: the running local stack (.data/stack.json), or DATABASE_URL, TEMPORAL_ADDRESS,
 * TEMPORAL_NAMESPACE, TEMPORAL_TASK_QUEUE and API_URL. Every command that changes something (retry, fail, refund,
 * recover, void) needs --reason and is written to the audit log (operator_actions) with the operator's identity:
 * --operator, else ROUTECTL_OPERATOR, else the login as user@host.
 */
import { parseArgs } from 'node:util';
import { runCommandLine, usageError, withOperatorContext } from './context.ts';
import * as apiKeys from './apiKeys.ts';
import * as income from './income.ts';
import * as operator from './operator.ts';
import { setup } from './setup.ts';
import * as workers from './workers.ts';

const USAGE = `usage: routectl <command>
  list [--status S] [--stuck] [--json] [--limit N]   transfers, newest first; --stuck = waiting for an operator
  show <routeId> [--json]                            projection, workflow state, parked step and last error, ledger, operator actions, webhook deliveries
  actions [--route R] [--operator O] [--limit N] [--json]
                                                     the operator audit log, newest first
  retry <routeId> --reason "…"                       re-run the parked step with a fresh retry budget
  retry --all-parked --reason "…" [--step S] [--status S] [--error TEXT] [--dry-run]
                                                     retry every parked transfer that matches (after an outage)
  fail <routeId> --reason "…"                        end a parked (or still unfunded) route as FAILED
  refund <routeId> --to <address> --reason "…" [--override "…"] [--now]
                                                     refund funds held at a finished route's deposit address: checked
                                                     now, sent after a random delay (REFUND_DELAY_MIN..MAX_SECONDS) unless --now
  recover <routeId> --side deposit|exit --reason "…" [--to <address>] [--override "…"]
                                                     move one side of a FAILED route's funds on the hub chain: deposit (pool note by
                                                     ragequit, hub account) to its refundAddress, exit (exit account) to its recipient
  senders [--json]                                   every sender's pending transactions: nonce, intent id, route, step, attempts, age
  void <intentId> --reason "…" [--cancel]            void an intent that can never mine; --cancel first replaces it with a 0-value self-send
  watch <routeId> [--timeout S]                      follow the statuses until COMPLETED or FAILED
  income [--json]                                    the service's income still in the pool (change notes), by asset
  income sweep --reason "…" [--spread-hours H]       collect what is due to INCOME_TREASURY_ADDRESS: grid amounts of old notes,
                                                     in a batch of many routes, at random moments of H hours (6)
  apikey create --name N [--per-minute N] [--creates-per-minute N] [--max-unfunded N] [--fee-bps N] [--vouch-users [--user-share F]]
                                                     a partner API key and its webhook secret (printed once); limits default to
                                                     the service's; --fee-bps: the partner's fee on its transfers (0 to 500);
                                                     --vouch-users: each userReference it sends is a client of its own in an
                                                     anonymity set, its users filling at most F of one (0.5; docs/privacy.md)
  apikey origins --name N (--origin O … | --clear) --reason "…"
                                                     the browser origins (scheme://host[:port]) that may call the API with the key
                                                     (CORS) and frame its transfers' tracking pages; replaces the list; a key with
                                                     origins is public (docs/api.md, "Keys in browsers"); create takes --origin too
  apikey vouch --name N (--user-share F | --off)     whether the key vouches for its users, for its transfers from now on
  apikey list [--json]                               partner keys: name, prefix, limits, fee, webhook secret generation, origins, created, revoked
  apikey revoke <name>                               the key answers 401 from now on
  apikey webhook --name N (--url U | --clear)        the key's default webhook endpoint, for its transfers created from now on
  apikey rotate-webhook-secret --name N [--overlap-hours H]
                                                     a new webhook secret for the partner; the old one also signs for H hours (24)
  partner fees [--json] [--since DATE]               what each partner is owed: its fees on completed transfers, per chain and token
  webhook-secret                                     the webhook secret of transfers created without an API key (needs WEBHOOK_SIGNING_SECRET)
  setup [--no-create-namespace] [--retention-days N]
                                                     prepare a Temporal cluster: the namespace (TEMPORAL_NAMESPACE; where the
                                                     cluster allows it) and the search attributes; idempotent
  workers [--deployment D] [--json]                  the worker deployment's versions (TEMPORAL_WORKER_DEPLOYMENT) and the current one
  workers promote <buildId> --reason "…" [--deployment D]
                                                     make a version current: workflow tasks go to its workers (a rolling deploy)
  devnet …                                           local stack only (info, fund, fault): see "routectl devnet help"
Commands that change something need --reason "…" and record it with the operator: --operator <name>, else
ROUTECTL_OPERATOR, else the login (user@host). --to must be the route's refundAddress (recover: the side's own
address), or an address in the worker's OPERATOR_ALLOWED_DESTINATIONS; anything else, the route's recipient above all
(deposit-side funds sent to it link the two ends), only with --override "<why>", recorded in the audit log.`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      stuck: { type: 'boolean', default: false },
      status: { type: 'string' },
      limit: { type: 'string', default: '100' },
      reason: { type: 'string' },
      operator: { type: 'string' },
      route: { type: 'string' },
      cancel: { type: 'boolean', default: false },
      now: { type: 'boolean', default: false },
      'all-parked': { type: 'boolean', default: false },
      'dry-run': { type: 'boolean', default: false },
      step: { type: 'string' },
      error: { type: 'string' },
      to: { type: 'string' },
      side: { type: 'string' },
      override: { type: 'string' },
      timeout: { type: 'string', default: '600' },
      name: { type: 'string' },
      'per-minute': { type: 'string' },
      'creates-per-minute': { type: 'string' },
      'max-unfunded': { type: 'string' },
      'fee-bps': { type: 'string' },
      'vouch-users': { type: 'boolean', default: false },
      'user-share': { type: 'string' },
      off: { type: 'boolean', default: false },
      origin: { type: 'string', multiple: true },
      clear: { type: 'boolean', default: false },
      'overlap-hours': { type: 'string', default: '24' },
      url: { type: 'string' },
      since: { type: 'string' },
      'no-create-namespace': { type: 'boolean', default: false },
      'retention-days': { type: 'string', default: '30' },
      'spread-hours': { type: 'string' },
      deployment: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, first, second] = positionals;
  const routeArg = () => {
    if (!first) throw usageError(`${command} needs a routeId\n${USAGE}`);
    return first;
  };
  const who = () => operator.operatorOf(command!, values);

  switch (values.help ? 'help' : command) {
    case 'list':
      await withOperatorContext((ctx) =>
        operator.list(ctx, { status: values.status, stuck: values.stuck, json: values.json, limit: Number(values.limit) || 100 }),
      );
      return 0;
    case 'show':
      await withOperatorContext((ctx) => operator.show(ctx, routeArg(), values.json));
      return 0;
    case 'actions': {
      const limit = Number(values.limit);
      if (!Number.isSafeInteger(limit) || limit <= 0) throw usageError('--limit must be a positive whole number');
      await withOperatorContext((ctx) => operator.actions(ctx, { routeId: values.route, operator: values.operator, limit, json: values.json }));
      return 0;
    }
    case 'retry':
      if (values['all-parked']) {
        if (first) throw usageError('retry takes a routeId or --all-parked, not both');
        const by = values['dry-run'] ? null : who();
        await withOperatorContext((ctx) =>
          operator.retryAllParked(ctx, by, { step: values.step, status: values.status, error: values.error, dryRun: values['dry-run'] }),
        );
      } else {
        const [routeId, by] = [routeArg(), who()];
        await withOperatorContext((ctx) => operator.retry(ctx, by, routeId));
      }
      return 0;
    case 'fail': {
      const [routeId, by] = [routeArg(), who()];
      await withOperatorContext((ctx) => operator.fail(ctx, by, routeId));
      return 0;
    }
    case 'refund': {
      const [routeId, by] = [routeArg(), who()];
      await withOperatorContext((ctx) => operator.refund(ctx, by, routeId, { to: values.to, override: values.override, now: values.now }));
      return 0;
    }
    case 'recover': {
      const [routeId, by] = [routeArg(), who()];
      await withOperatorContext((ctx) => operator.recover(ctx, by, routeId, { side: values.side, to: values.to, override: values.override }));
      return 0;
    }
    case 'senders':
      await withOperatorContext((ctx) => operator.senders(ctx, values.json));
      return 0;
    case 'void': {
      if (!first) throw usageError(`void needs an intent id\n${USAGE}`);
      const by = who();
      await withOperatorContext((ctx) => operator.voidIntent(ctx, by, first, { cancel: values.cancel }));
      return 0;
    }
    case 'income':
      if (first === 'sweep') {
        const by = who();
        await withOperatorContext((ctx) => income.sweepIncome(ctx, by, values['spread-hours']));
      } else if (first === undefined) await withOperatorContext((ctx) => income.listIncome(ctx, values.json));
      else throw usageError(USAGE);
      return 0;
    case 'watch': {
      const completed = await withOperatorContext((ctx) => operator.watch(ctx, routeArg(), Number(values.timeout) * 1000));
      return completed ? 0 : 1;
    }
    case 'apikey':
      if (first === 'create')
        await apiKeys.create(values.name, {
          perMinute: values['per-minute'],
          createsPerMinute: values['creates-per-minute'],
          maxUnfunded: values['max-unfunded'],
          feeBps: values['fee-bps'],
          vouchUsers: values['vouch-users'],
          userShare: values['user-share'],
          origins: values.origin,
        });
      else if (first === 'origins') {
        const by = who();
        await apiKeys.origins(values.name, by, { origins: values.origin, clear: values.clear });
      } else if (first === 'vouch') await apiKeys.vouch(values.name, { userShare: values['user-share'], off: values.off });
      else if (first === 'list') await apiKeys.list(values.json);
      else if (first === 'revoke') await apiKeys.revoke(second);
      else if (first === 'rotate-webhook-secret') await apiKeys.rotateSecret(values.name, values['overlap-hours']);
      else if (first === 'webhook') await apiKeys.defaultWebhook(values.name, { url: values.url, clear: values.clear });
      else throw usageError(USAGE);
      return 0;
    case 'webhook-secret':
      apiKeys.keylessSecret();
      return 0;
    case 'partner':
      if (first === 'fees') await apiKeys.fees(values.json, values.since);
      else throw usageError(USAGE);
      return 0;
    case 'setup':
      await setup({ createNamespace: !values['no-create-namespace'], retentionDays: values['retention-days'] });
      return 0;
    case 'workers':
      if (first === 'promote') await workers.promote(second, { deployment: values.deployment, operator: who().operator });
      else if (first === undefined) await workers.listVersions({ deployment: values.deployment, json: values.json });
      else throw usageError(USAGE);
      return 0;
    case 'help':
      process.stdout.write(`${USAGE}\n`);
      return 0;
    default:
      throw usageError(USAGE);
  }
}

runCommandLine(() => main(process.argv.slice(2)));
