/**
 * Body of one prover thread, started by prover.ts; the message shapes are ThreadRequest and
 * ThreadReply there.
 *
 * Plain JavaScript on purpose: under Node 20 a worker thread inherits `--import tsx` but tsx's
 * loader does not apply to the thread's own modules, so a .ts entry fails with
 * ERR_UNKNOWN_FILE_EXTENSION. This file only needs the SDK, so it loads the same way under tsx, the
 * test runner and plain node.
 *
 * On start it loads the six circuit files through the SDK, which checks each one's SHA-256 against
 * its own manifest, and answers `ready` or `init-failed`. The bytes it proves with are the bytes
 * that were checked. Then it proves one request at a time (the main thread never sends a second
 * before the first is answered).
 */
import workerThreads from 'node:worker_threads';

const { parentPort, workerData } = workerThreads;
if (!parentPort) throw new Error('proverThread.mjs runs only as a worker thread (see prover.ts)');
const port = parentPort;

// The SDK's bundle includes snarkjs's field arithmetic (ffjavascript), which starts its own threads
// through the web-worker package (1.2.0). That package decides, once, while the bundle is evaluated,
// from `isMainThread` alone, whether it runs inside one of its own threads; here it would take that
// branch, export nothing, and every proof would fail with "Worker is not a constructor" (fixed in
// web-worker 1.3.0, developit/web-worker#40). So evaluate the SDK while `isMainThread` reads true:
// web-worker's own threads still see false and carry their `workerData.mod`, so they act as workers.
workerThreads.isMainThread = true;
const { Circuits, PrivacyPoolSDK } = await import('@0xbow/privacy-pools-core-sdk').finally(() => {
  workerThreads.isMainThread = false;
});

const circuits = new Circuits({ browser: false, baseUrl: workerData.baseUrl });
const loaded = await circuits.initArtifacts('latest').then(
  () => true,
  (error) => {
    port.postMessage({ type: 'init-failed', error: describeError(error) });
    return false;
  },
);
if (loaded) serve(new PrivacyPoolSDK(circuits));

function serve(sdk) {
  port.on('message', async (request) => {
    try {
      const proof =
        request.kind === 'withdrawal'
          ? await sdk.proveWithdrawal(request.commitment, request.input)
          : await sdk.proveCommitment(request.value, request.label, request.nullifier, request.secret);
      port.postMessage({ type: 'proved', id: request.id, proof });
    } catch (error) {
      port.postMessage({ type: 'failed', id: request.id, error: describeError(error) });
    }
  });
  port.postMessage({ type: 'ready' });
}

/** SDK errors carry the real cause in `details.error` ("Failed to generate proof" alone says little). */
function describeError(error) {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  const cause = error.details?.error;
  return {
    name: error.name,
    message: typeof cause === 'string' ? `${error.message}: ${cause.trim()}` : error.message,
    code: typeof error.code === 'string' ? error.code : undefined,
  };
}
