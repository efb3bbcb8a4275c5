/** Restarts of the stack's servers under transfers in flight, on the same data and ports. */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { startLocalPostgres } from '../postgres.ts';
import { commandOf, PROCESSES_FILE } from '../processes.ts';
import { readTemporalDevConfig, startTemporalDevServer } from '../temporalServer.ts';
import type { DrillContext } from './context.ts';
import { DrillError } from './types.ts';
import { sleep } from './waiting.ts';

/** Stops the server and starts it again; returns when the stop began and when it accepted connections again. */
export async function restartServer(ctx: DrillContext, server: 'temporal' | 'postgres'): Promise<{ downAt: number; upAt: number }> {
  const downAt = Date.now();
  if (server === 'temporal') {
    if (ctx.temporalServer) await ctx.temporalServer.stop();
    else await stopRecordedTemporal(ctx.dataDir);
    ctx.temporalServer = await startTemporalDevServer({
      dataDir: ctx.dataDir,
      config: readTemporalDevConfig(),
      port: ctx.ports.temporal,
      uiPort: ctx.ports.temporalUi,
    });
  } else {
    // Adopts the running cluster (same folder and port) only to stop it with pg_ctl, then starts it again.
    const running = await startLocalPostgres({ dataDir: ctx.dataDir, port: ctx.ports.postgres });
    await running.stop();
    await startLocalPostgres({ dataDir: ctx.dataDir, port: ctx.ports.postgres });
  }
  return { downAt, upAt: Date.now() };
}

/** Stops the stack's Temporal dev server by its recorded pid (SIGTERM; SIGKILL after 15 s), only if it still runs the recorded command. */
async function stopRecordedTemporal(dataDir: string): Promise<void> {
  const file = path.join(dataDir, PROCESSES_FILE);
  if (!existsSync(file)) throw new DrillError(`no ${PROCESSES_FILE} in ${dataDir}: cannot find the Temporal dev server to restart`);
  const record = JSON.parse(readFileSync(file, 'utf8')) as { children: Array<{ name: string; pid: number; command: string }> };
  const server = record.children.find((c) => c.name === 'temporal dev server');
  if (!server || commandOf(server.pid) !== server.command) throw new DrillError(`the Temporal dev server recorded in ${file} is not running`);
  process.kill(server.pid, 'SIGTERM');
  const deadline = Date.now() + 15_000;
  while (commandOf(server.pid) === server.command) {
    if (Date.now() > deadline) process.kill(server.pid, 'SIGKILL');
    await sleep(100);
  }
}
