/**
 * A small HTTP load balancer for the rehearsal (devnet/rehearsal.ts): round-robin over the API replicas, appending
 * the caller's address to X-Forwarded-For as a real one does (so the APIs run with TRUST_PROXY_HOPS=1), and trying the
 * next replica when one refuses the connection: a replica that is restarting is skipped, as a balancer's health
 * check would. A request that reached a replica is never sent twice (a POST could create twice).
 */
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LoadBalancer {
  url: string;
  /** Requests answered 502 because no replica accepted them. */
  failed(): number;
  /** Requests a replica refused and the next one served. */
  retried(): number;
  stop(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'te', 'trailer']);

export async function startLoadBalancer(upstreamPorts: number[]): Promise<LoadBalancer> {
  let turn = 0;
  let failed = 0;
  let retried = 0;
  const server: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = Buffer.concat(chunks);
      const peer = incoming.socket.remoteAddress ?? 'unknown';
      const forwarded = incoming.headers['x-forwarded-for'];
      const headers: IncomingHttpHeaders = Object.fromEntries(Object.entries(incoming.headers).filter(([name]) => !HOP_BY_HOP.has(name)));
      headers['x-forwarded-for'] = forwarded ? `${forwarded}, ${peer}` : peer;
      headers['content-length'] = String(body.length);
      const first = turn++ % upstreamPorts.length;
      const attempt = (tried: number) => {
        const port = upstreamPorts[(first + tried) % upstreamPorts.length]!;
        const upstream = request({ host: '127.0.0.1', port, method: incoming.method, path: incoming.url, headers, agent: false }, (answer) => {
          outgoing.writeHead(
            answer.statusCode ?? 502,
            Object.fromEntries(Object.entries(answer.headers).filter(([name]) => !HOP_BY_HOP.has(name))) as IncomingHttpHeaders,
          );
          answer.pipe(outgoing);
          outgoing.on('close', () => answer.destroy());
        });
        upstream.on('error', (error: NodeJS.ErrnoException) => {
          if (error.code === 'ECONNREFUSED' && tried + 1 < upstreamPorts.length) {
            retried++;
            attempt(tried + 1);
            return;
          }
          failed++;
          if (!outgoing.headersSent) outgoing.writeHead(502, { 'content-type': 'application/json' });
          outgoing.end(JSON.stringify({ success: false, error: `no API replica answered (${error.code ?? error.message})` }));
        });
        upstream.end(body);
      };
      attempt(0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    failed: () => failed,
    retried: () => retried,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
