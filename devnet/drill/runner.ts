/** Runs the drill's steps in order, recording each one's start and finish, and stops at the first that fails. */
import { type DrillContext, stopIfAborted } from './context.ts';
import type { TimedSpan } from './events.ts';

export interface Step {
  /** What it does, as the event log says it. */
  name: string;
  /** The span of the report's times it counts towards, if any. */
  timed?: TimedSpan;
  /** Not started once the drill is interrupted (its signal aborted): the drill fails there instead. */
  interruptible?: boolean;
  run(ctx: DrillContext): Promise<void>;
}

/** A step that throws is recorded as failed (step-failed, with its error's message) and the steps after it do not run. */
export async function runSteps(steps: readonly Step[], ctx: DrillContext): Promise<void> {
  for (const step of steps) {
    const { name, timed } = step;
    ctx.events.append({ type: 'step-started', step: name, timed });
    try {
      if (step.interruptible) stopIfAborted(ctx);
      await step.run(ctx);
    } catch (error) {
      ctx.events.append({ type: 'step-failed', step: name, timed, error: error instanceof Error ? error.message : String(error) });
      return;
    }
    ctx.events.append({ type: 'step-finished', step: name, timed });
  }
}
