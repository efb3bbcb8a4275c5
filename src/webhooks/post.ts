import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { guardedLookup, isPrivateAddress, PRIVATE_TARGET_MESSAGE, PrivateTargetError } from './targets.ts';

export interface WebhookPostOptions {
  timeoutMs: number;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: the local stack and tests POST to 127.0.0.1. */
  allowPrivateTargets: boolean;
}

/** What one attempt came to. `error` never contains the URL (it may carry the client's own secret). */
export type WebhookPostResult = { kind: 'answered'; status: number } | { kind: 'refused'; error: string } | { kind: 'unanswered'; error: string };

/**
 * POSTs one delivery: no redirects followed (a 3xx is an answer like any other), at most `timeoutMs` for the
 * whole exchange, addresses checked by the SSRF guard (targets.ts). The answer's body is not read.
 */
export async function postWebhook(url: string, headers: Record<string, string>, body: string, opts: WebhookPostOptions): Promise<WebhookPostResult> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return { kind: 'refused', error: 'the webhook URL is not a valid URL' };
  }
  if (target.protocol !== 'https:' && target.protocol !== 'http:') return { kind: 'refused', error: 'the webhook URL is not http(s)' };
  // A literal address is connected to without any lookup: it is checked here instead.
  const literal = target.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!opts.allowPrivateTargets && isIP(literal) !== 0 && isPrivateAddress(literal)) return { kind: 'refused', error: PRIVATE_TARGET_MESSAGE };
  const client = target.protocol === 'https:' ? https : http;
  return new Promise<WebhookPostResult>((resolve) => {
    const request = client.request(
      target,
      {
        method: 'POST',
        headers: {
          ...headers,
          'Content-Type': 'application/json',
          'Content-Length': String(Buffer.byteLength(body)),
          'User-Agent': 'private-route-webhooks/1',
        },
        lookup: guardedLookup(opts.allowPrivateTargets),
        signal: AbortSignal.timeout(opts.timeoutMs),
        // A fresh connection per delivery: a kept-alive socket would skip the address check of the next one.
        agent: false,
      },
      (response) => {
        resolve({ kind: 'answered', status: response.statusCode ?? 0 });
        response.destroy();
      },
    );
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (error instanceof PrivateTargetError) resolve({ kind: 'refused', error: error.message });
      else if (error.name === 'AbortError' || error.name === 'TimeoutError')
        resolve({ kind: 'unanswered', error: `no answer within ${opts.timeoutMs / 1000} s` });
      else resolve({ kind: 'unanswered', error: `the connection failed (${error.code ?? error.name})` });
    });
    request.end(body);
  });
}
