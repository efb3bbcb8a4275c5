import { bridgeActivities } from './bridge.ts';
import type { ActivityDeps } from './deps.ts';
import { depositActivities } from './deposit.ts';
import { depositWatcherActivities } from './depositWatcher.ts';
import { privacyWatcherActivities } from './privacyWatcher.ts';
import { fundsActivities } from './funds.ts';
import { intentActivities } from './intents.ts';
import { strayActivities } from './strays.ts';
import { poolActivities } from './pool.ts';
import { projectionActivities, recordLedger } from './projection.ts';
import { recoverActivities } from './recover.ts';

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
    /**
     * Books what the service kept: the note's value less the bridge-out input (the pool's change note, the relay
     * fee and any rounding dust at the exit account).
     */
    async recordServiceFee(input: { routeId: string; chainId: number; token: string; shielded: string; bridgedOut: string }): Promise<void> {
      const fee = BigInt(input.shielded) - BigInt(input.bridgedOut);
      await recordLedger(deps, { routeId: input.routeId, kind: 'service_fee', chainId: input.chainId, token: input.token, amount: fee.toString() });
    },
  };
}

export type TransferActivities = ReturnType<typeof createActivities>;
