/**
 * Workflow interceptors, bundled into the workflow code (src/temporal/worker.ts): this module runs in
 * the workflow sandbox, so it imports only @temporalio/workflow and dependency-free modules.
 */
import { workflowInfo, type WorkflowInterceptorsFactory } from '@temporalio/workflow';
import { routeIdOfWorkflow } from './routeId.ts';

/** Every log line of a route's workflow (workflow.log and the SDK's own workflow lifecycle lines) carries its routeId. */
export const interceptors: WorkflowInterceptorsFactory = () => {
  const routeId = routeIdOfWorkflow(workflowInfo().workflowId);
  if (routeId === undefined) return {};
  return { outbound: [{ getLogAttributes: (input, next) => next({ ...input, routeId }) }] };
};
