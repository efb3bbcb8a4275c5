import { Hono, type Context } from 'hono';
import type { Hex } from 'viem';
import { faultRoutes, type FaultRegistry } from '../faults.ts';
import type { Attester } from './attester.ts';
import { irisFeesBody, type IrisFees } from './fees.ts';
import { irisDecodedMessage } from './messages.ts';
import type { IrisMessage } from './store.ts';

const bytes32 = /^0x[0-9a-fA-F]{64}$/;

/**
 * The Hono app speaking Iris's CCTP v2 API (GET /v2/burn/USDC/fees, GET /v2/messages, GET /v2/publicKeys,
 * POST /v2/reattest),
 * plus the stack's fault injection under /_emulator/faults.
 */
export function createIrisApp(ctx: {
  attester: Attester;
  domains: ReadonlySet<number>;
  fees: IrisFees;
  faults: FaultRegistry;
  publicKey: Hex;
  log: (obj: object) => void;
}) {
  const app = new Hono();

  app.onError((err, c) => {
    ctx.log({ event: 'http.error', path: c.req.path, error: err instanceof Error ? err.message : String(err) });
    return c.json({ error: 'Internal Server Error' }, 500);
  });
  app.notFound((c) => c.json({ error: 'Not Found' }, 404));

  const domainParam = (c: Context, name: string): number | undefined => {
    const text = c.req.param(name) ?? '';
    const domain = /^\d+$/.test(text) ? Number(text) : Number.NaN;
    return ctx.domains.has(domain) ? domain : undefined;
  };

  app.get('/v2/burn/USDC/fees/:sourceDomainId/:destDomainId', (c) => {
    const source = domainParam(c, 'sourceDomainId');
    const destination = domainParam(c, 'destDomainId');
    if (source === undefined || destination === undefined || source === destination) {
      return c.json({ error: 'Invalid source or destination domain' }, 400);
    }
    return c.json(irisFeesBody(ctx.fees));
  });

  app.get('/v2/messages/:sourceDomainId', async (c) => {
    const domain = domainParam(c, 'sourceDomainId');
    if (domain === undefined) return c.json({ error: `Invalid source domain ${c.req.param('sourceDomainId')}` }, 400);
    const txHash = c.req.query('transactionHash');
    const nonce = c.req.query('nonce');
    if (txHash === undefined && nonce === undefined) return c.json({ error: 'At least one of transactionHash or nonce is required' }, 400);
    if (txHash !== undefined && !bytes32.test(txHash)) return c.json({ error: 'Invalid transactionHash' }, 400);
    if (nonce !== undefined && !bytes32.test(nonce)) return c.json({ error: 'Invalid nonce' }, 400);

    const found = txHash
      ? ((await ctx.attester.byTransaction(domain, txHash as Hex)) ?? [])
      : [ctx.attester.byNonce(domain, nonce as Hex)].filter((m) => m !== undefined);
    const messages = nonce ? found.filter((m) => m.nonce.toLowerCase() === nonce.toLowerCase()) : found;
    if (messages.length === 0) return c.json({ error: 'Message hash not found' }, 404);

    const fault = ctx.faults.take(messages[0]!.operation, 'fail');
    if (fault) {
      ctx.log({ event: 'iris.fault_injected', operation: fault.operation, sourceDomain: domain, txHash, nonce });
      return c.json({ error: 'Internal Server Error' }, 500);
    }
    const now = Date.now();
    return c.json({ messages: messages.map((m) => irisMessage(m, now)) });
  });

  app.get('/v2/publicKeys', (c) => c.json({ publicKeys: [{ publicKey: ctx.publicKey, cctpVersion: 2 }] }));

  // Re-attestation: a message past its expirationBlock is signed again with a fresh one (GET /v2/messages serves it).
  app.post('/v2/reattest/:nonce', async (c) => {
    const nonce = c.req.param('nonce');
    if (!bytes32.test(nonce)) return c.json({ error: 'Invalid nonce' }, 400);
    if (!(await ctx.attester.reattest(nonce as Hex))) return c.json({ error: 'Message not found' }, 404);
    return c.json({ message: 'Re-attestation successfully requested for nonce.', nonce });
  });

  // ---- emulator-only ----

  app.route('/_emulator/faults', faultRoutes(ctx.faults));

  return app;
}

/**
 * One entry of GET /v2/messages: pending (attestation 'PENDING', the message as emitted) until the
 * message's pending period is over and its fee is covered, then complete with the final message.
 */
function irisMessage(m: IrisMessage, now: number) {
  if (m.attested && now >= m.readyAt) {
    return {
      message: m.attested.message,
      eventNonce: m.nonce,
      attestation: m.attested.attestation,
      decodedMessage: irisDecodedMessage(m.attested.message),
      cctpVersion: 2,
      status: 'complete',
      delayReason: null,
    };
  }
  return {
    message: m.emitted,
    eventNonce: m.nonce,
    attestation: 'PENDING',
    decodedMessage: null,
    cctpVersion: 2,
    status: 'pending_confirmations',
    delayReason: m.attested ? null : 'insufficient_fee',
  };
}
