import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { bundleWorkflows } from '../../src/temporal/worker.ts';
import { workflowSpanSinks } from '../../src/observability/tracing.ts';
import { createLogger } from '../../src/logger.ts';

/**
 * Every recorded history (test/workflow/histories, written by scripts/record-history.ts) must replay with
 * today's workflow code: a change to the workflow's commands that would break transfers in flight fails
 * here. A change ships with a `patched()` guard (or a new workflow type) and a new recording.
 *
 * A history file is named `<workflow type>-<label>.history` after the workflow type it holds (say
 * `transferWorkflowV2-5-relay.history`); the label numbers the recordings of that type, oldest first, and
 * says what was recorded.
 */
const dir = new URL('./histories/', import.meta.url);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.history'))
  .sort();

test('recorded workflow histories replay with the current workflow code', { timeout: 120_000 }, async () => {
  assert.ok(files.length >= 2, 'recorded histories are missing');
  const workflowBundle = await bundleWorkflows({ logger: createLogger({ level: 'warn' }) });
  for (const file of files) {
    const history = proto.temporal.api.history.v1.History.decode(readFileSync(new URL(file, dir)));
    const workflowType = history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name;
    assert.ok(file.startsWith(`${workflowType}-`), `${file} holds a ${workflowType} history: name it ${workflowType}-<label>.history`);
    await assert.doesNotReject(Worker.runReplayHistory({ workflowBundle, sinks: workflowSpanSinks(undefined) }, history, file), `${file} no longer replays`);
  }
});
