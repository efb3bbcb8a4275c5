import { bridgeActivities } from './bridge.ts';
import type { ActivityDeps } from './deps.ts';
import { depositActivities } from './deposit.ts';
import { depositWatcherActivities } from './depositWatcher.ts';
import { privacyWatcherActivities } from './privacyWatcher.ts';
import { fundsActivities } from './funds.ts';
import { incomeActivities } from './income.ts';
import { intentActivities } from './intents.ts';
import { strayActivities } from './strays.ts';
import { poolActivities } from './pool.ts';
import { projectionActivities, recordServiceFee } from './projection.ts';
import { recoverActivities } from './recover.ts';
import { webhookActivities } from './webhooks.ts';

export type { ActivityDeps, WorkflowNotifier } from './deps.ts';

/** All activities of the transfer workflow, bound to their dependencies. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...projectionActivities(deps),
    ...depositActivities(deps),
    ...depositWatcherActivities(deps),
    ...privacyWatcherActivities(deps),
    ...bridgeActivities(deps),
    ...poolActivities(deps),
    ...fundsActivities(deps),
    ...strayActivities(deps),
    ...intentActivities(deps),
    ...recoverActivities(deps),
    ...webhookActivities(deps),
    ...incomeActivities(deps),
    /** The service fee of a transfer started before transferWorkflowV2 (later ones book it in awaitDelivery). */
    recordServiceFee: (input: Parameters<typeof recordServiceFee>[1]) => recordServiceFee(deps, input),
  };
}

export type TransferActivities = ReturnType<typeof createActivities>;
