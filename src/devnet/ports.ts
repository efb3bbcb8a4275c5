import net from 'node:net';

/**
 * `count` distinct TCP ports that were free a moment ago, chosen by the OS. All are held open until
 * every one is known, so the same port is never handed out twice.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => net.createServer());
  const ports = await Promise.all(
    servers.map(
      (server) =>
        new Promise<number>((resolve, reject) => {
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port));
        }),
    ),
  );
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
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
