/**
 * Workflow interceptors, bundled into the workflow code (src/temporal/worker.ts): this module runs in
 * the workflow sandbox, so it imports only @temporalio/workflow and dependency-free modules.
 */
import { workflowInfo, type WorkflowInterceptorsFactory, type WorkflowOutboundCallsInterceptor } from '@temporalio/workflow';
import { routeIdOfWorkflow } from './routeId.ts';
import { workflowTracingInterceptors } from './workflowTracing.ts';

/**
 * Every log line of a route's workflow (workflow.log and the SDK's own workflow lifecycle lines) carries its routeId;
 * every workflow's run is a span of the trace that started it (src/observability/workflowTracing.ts).
 */
export const interceptors: WorkflowInterceptorsFactory = () => {
  const routeId = routeIdOfWorkflow(workflowInfo().workflowId);
  const tracing = workflowTracingInterceptors();
  const outbound: WorkflowOutboundCallsInterceptor[] = [tracing.outbound];
  if (routeId !== undefined) outbound.push({ getLogAttributes: (input, next) => next({ ...input, routeId }) });
  return { inbound: [tracing.inbound], outbound };
};
