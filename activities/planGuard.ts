import { Context } from '@temporalio/activity';
import type { RoutePlan } from '../src/domain/plan.ts';
import type { ActivityDeps } from './deps.ts';
import { failure } from '../src/failures.ts';
import { transferOf } from '../src/transfers/transferStore.ts';

/**
 * A step that moves money checks its plan against the transfer the API recorded, and that it runs in that
 * transfer's own workflow (id = routeId). A workflow started by hand in Temporal with a forged plan (another
 * route's account index, an attacker's recipient) then moves nothing: account_index is unique per transfer, so no
 * new row can claim another route's accounts, and the recorded recipient is the one the client gave at create.
 */
export async function assertPlanIsRecorded(
  deps: Pick<ActivityDeps, 'db'>,
  plan: Pick<RoutePlan, 'routeId' | 'accountIndex' | 'recipient' | 'depositAddress' | 'hubAccount'>,
): Promise<void> {
  const workflowId = Context.current().info.workflowExecution?.workflowId;
  if (workflowId !== plan.routeId) {
    throw failure(
      'PlanNotRecorded',
      `this step's plan is route ${plan.routeId} but it runs in workflow ${workflowId}: a transfer's steps run only in its own workflow; nothing was moved (find who started ${workflowId})`,
    );
  }
  const row = await transferOf(deps.db, plan.routeId);
  const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
  if (
    !row ||
    row.accountIndex !== plan.accountIndex ||
    !same(row.userDestinationAddress, plan.recipient) ||
    !same(row.depositAddress, plan.depositAddress) ||
    !same(row.hubAccount, plan.hubAccount)
  ) {
    throw failure(
      'PlanNotRecorded',
      `the plan of ${plan.routeId} is not the transfer recorded for it (${row ? 'account index, recipient, deposit or hub account differ' : 'no such transfer'}): nothing was moved; find who started this workflow`,
    );
  }
}
