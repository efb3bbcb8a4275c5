/**
 * The routeId a Temporal workflow works for, from its workflow id: a transfer's workflow id is the
 * routeId (`rt_<32 hex>`), a route's other workflows are `<routeId>:<purpose>` (e.g. `:refund`);
 * anything else (the stray-deposit scanner) works for no single route.
 *
 * Dependency-free on purpose: it is bundled into the workflow code (workflowInterceptors.ts).
 */
const ROUTE_WORKFLOW_ID = /^(rt_[0-9a-f]{32})(?::|$)/;

export function routeIdOfWorkflow(workflowId: string | undefined): string | undefined {
  return workflowId === undefined ? undefined : ROUTE_WORKFLOW_ID.exec(workflowId)?.[1];
}
