/**
 * A plain HTTP forwarder in front of a server that records every request exactly as a server receives it: the
 * request line's target (`req.url`: path and query, never a fragment) and the headers. A browser pointed at it shows
 * what the server behind could see, or log, of each request it made.
 */
import { createServer, type IncomingHttpHeaders, request } from 'node:http';
import { freePort } from '../../devnet/ports.ts';

export interface ReceivedRequest {
  method: string;
  /** The request target as received: `/t/rt_…`, `/api/…?…`. */
  target: string;
  headers: IncomingHttpHeaders;
}

export interface RecordingForwarder {
  /** Its own origin, `http://127.0.0.1:<port>`: open pages here. */
  url: string;
  received: ReceivedRequest[];
  close(): Promise<void>;
}

export async function startRecordingForwarder(upstreamUrl: string): Promise<RecordingForwarder> {
  const upstream = new URL(upstreamUrl);
  const received: ReceivedRequest[] = [];
  const server = createServer((incoming, answer) => {
    received.push({ method: incoming.method ?? '', target: incoming.url ?? '', headers: incoming.headers });
    const forwarded = request(
      { host: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers: incoming.headers },
      (response) => {
        answer.writeHead(response.statusCode ?? 502, response.headers);
        response.pipe(answer);
      },
    );
    forwarded.on('error', () => answer.destroy());
    incoming.pipe(forwarded);
  });
  const port = await freePort();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
