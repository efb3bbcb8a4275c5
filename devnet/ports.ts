import net from 'node:net';

/**
 * `TEST_PORT_RANGE=22000-27999`: hand out ports from that range instead of the OS's. `npm test` runs four lanes of
 * test files side by side (scripts/run-tests.sh), each with a range of its own below the OS's ephemeral ports
 * (32768 and up): a port one lane picks is never picked by another, nor taken as the source port of an
 * outgoing connection between being picked and being bound.
 */
function configuredRange(): [number, number] | null {
  const match = /^(\d+)-(\d+)$/.exec(process.env.TEST_PORT_RANGE ?? '');
  if (!match) return null;
  const [low, high] = [Number(match[1]), Number(match[2])];
  return low >= 1024 && high <= 65535 && low < high ? [low, high] : null;
}

/** Ports this process handed out from the range: never handed out twice (a stack may not have bound them yet). */
const handedOut = new Set<number>();

const listenOn = (server: net.Server, port: number) =>
  new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port));
  });

/**
 * `count` distinct TCP ports that were free a moment ago, chosen by the OS (or from TEST_PORT_RANGE). All are
 * held open until every one is known, so the same port is never handed out twice.
 */
export async function freePorts(count: number): Promise<number[]> {
  const range = configuredRange();
  const servers: net.Server[] = [];
  const ports: number[] = [];
  try {
    if (!range) {
      for (let i = 0; i < count; i++) servers.push(net.createServer());
      ports.push(...(await Promise.all(servers.map((server) => listenOn(server, 0)))));
    } else {
      const [low, high] = range;
      for (let attempt = 0; ports.length < count; attempt++) {
        if (attempt > 20 * (high - low)) throw new Error(`no free port left in TEST_PORT_RANGE ${low}-${high}`);
        const port = low + Math.floor(Math.random() * (high - low + 1));
        if (handedOut.has(port)) continue;
        const server = net.createServer();
        try {
          await listenOn(server, port);
        } catch {
          continue; // in use
        }
        servers.push(server);
        ports.push(port);
        handedOut.add(port);
      }
    }
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
  return ports;
}

/** One free port (see freePorts). */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port!;
}

/** Free ports for the three devnet chains. */
export async function freeChainPorts(): Promise<{ source: number; hub: number; destination: number }> {
  const [source, hub, destination] = (await freePorts(3)) as [number, number, number];
  return { source, hub, destination };
}
