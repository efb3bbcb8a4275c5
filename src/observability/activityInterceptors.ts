/** Activity interceptors of the transfer worker: routeId on every activity log line, and step timing. */
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { stepDuration } from './metrics.ts';
import { routeIdOfWorkflow } from './routeId.ts';

export const activityInterceptors: ActivityInterceptorsFactory = (ctx) => {
  const routeId = routeIdOfWorkflow(ctx.info.workflowExecution?.workflowId);
  return {
    inbound: {
      async execute(input, next) {
        const end = stepDuration.startTimer({ step: ctx.info.activityType });
        try {
          const result = await next(input);
          end({ outcome: 'success' });
          return result;
        } catch (error) {
          end({ outcome: 'failure' });
          throw error;
        }
      },
    },
    outbound: {
      getLogAttributes: (input, next) => next(routeId === undefined ? input : { ...input, routeId }),
    },
  };
};
