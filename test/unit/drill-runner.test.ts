import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { DrillContext } from '../../devnet/drill/context.ts';
import { EventLog } from '../../devnet/drill/events.ts';
import { runSteps, type Step } from '../../devnet/drill/runner.ts';

/** A context with nothing running: the runner itself only needs the event log and the settings' signal. */
const contextWith = (signal?: AbortSignal) => ({ settings: { signal }, events: new EventLog() }) as unknown as DrillContext;
const step = (name: string, run: Step['run'] = async () => {}, extra: Partial<Step> = {}): Step => ({ name, run, ...extra });
const recorded = (ctx: DrillContext) =>
  ctx.events.events.map((e) => ('step' in e ? `${e.type} ${e.step}${e.type === 'step-failed' ? `: ${e.error}` : ''}` : e.type));

test('the runner runs the steps in order and stops at the first that fails', { timeout: 5_000 }, async () => {
  const ctx = contextWith();
  const ran: string[] = [];
  await runSteps(
    [
      step('one', async () => void ran.push('one')),
      step('two', async (c) => {
        ran.push('two');
        c.events.append({ type: 'problem', text: 'seen on the way' });
        throw new Error('broke');
      }),
      step('three', async () => void ran.push('three')),
    ],
    ctx,
  );
  assert.deepEqual(ran, ['one', 'two']);
  assert.deepEqual(recorded(ctx), ['step-started one', 'step-finished one', 'step-started two', 'problem', 'step-failed two: broke']);
});

test('once the drill is interrupted, an interruptible step fails before it runs; the others still run', { timeout: 5_000 }, async () => {
  const abort = new AbortController();
  abort.abort();
  const ctx = contextWith(abort.signal);
  const ran: string[] = [];
  await runSteps(
    [step('stack', async () => void ran.push('stack')), step('crash', async () => void ran.push('crash'), { interruptible: true, timed: 'crashes' })],
    ctx,
  );
  assert.deepEqual(ran, ['stack']);
  assert.deepEqual(recorded(ctx).at(-1), 'step-failed crash: the drill was interrupted');
  assert.deepEqual(ctx.events.events.at(-1), {
    type: 'step-failed',
    at: ctx.events.events.at(-1)?.at,
    step: 'crash',
    timed: 'crashes',
    error: 'the drill was interrupted',
  });
});
