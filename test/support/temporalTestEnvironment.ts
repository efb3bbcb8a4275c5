/**
 * A local Temporal dev server for a test, from the project's own Temporal CLI. The SDK gives the server a fixed 5 s
 * to accept connections (sdk-core's ephemeral_server), which a busy 2-core machine sometimes misses while the CLI
 * sets up its database: a start that times out so is tried again, up to three times; any other failure is not.
 *
 * Its timers fire when they are due: by default the server's timer queue fires none earlier than 1 s after it was
 * created (history.timerProcessorMaxTimeShift), so a workflow's `sleep(0)`, a 200 ms activity retry or a deadline a
 * moment away each cost a test a second or more. 10 ms here; production servers keep their default.
 */
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { resolveTemporalCli } from '../../devnet/temporalServer.ts';

type LocalOptions = NonNullable<Parameters<typeof TestWorkflowEnvironment.createLocal>[0]>;
type ServerOptions = Omit<NonNullable<LocalOptions['server']>, 'executable'>;

const ATTEMPTS = 3;
const TIMELY_TIMERS = ['--dynamic-config-value', 'history.timerProcessorMaxTimeShift="10ms"'];

export async function startTestTemporal(server: ServerOptions = {}): Promise<TestWorkflowEnvironment> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await TestWorkflowEnvironment.createLocal({
        server: { ...server, extraArgs: [...TIMELY_TIMERS, ...(server.extraArgs ?? [])], executable: { type: 'existing-path', path: resolveTemporalCli() } },
      });
    } catch (error) {
      const timedOut = error instanceof Error && /did not start within/.test(error.message);
      if (!timedOut || attempt >= ATTEMPTS) throw error;
    }
  }
}
