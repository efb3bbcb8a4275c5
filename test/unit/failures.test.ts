import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { HttpRequestError } from 'viem';
import { NonceConsumedError, TransactionRevertedError, VoidRefusedError } from '../../src/chain/txSender.ts';
import { PrivateRouteError } from '../../src/errors.ts';
import { failure } from '../../src/failures.ts';
import { FAILURES, FINAL_TYPES, isFailureType } from '../../src/domain/failures.ts';
import { BridgeRouteError, BridgeUnavailableError } from '../../src/providers/bridge.ts';
import { CctpBurnMismatchError } from '../../src/providers/cctp/adapter.ts';
import { IrisRateLimitedError } from '../../src/providers/cctp/iris.ts';
import { AspUnavailableError } from '../../src/providers/privacy-pools/asp.ts';
import { ProverError } from '../../src/providers/privacy-pools/prover.ts';
import { activityErrors, translateActivityError } from '../../src/temporal/activityErrors.ts';

const SECRET = 'k3y-0f-the-rpc';
const URL_WITH_KEY = `https://rpc.example.com/v2/${SECRET}?apikey=${SECRET}`;

/** Translates and checks the result is an ApplicationFailure that mentions no secret (message and stack). */
function translated(error: unknown): ApplicationFailure {
  const result = translateActivityError(error);
  assert.ok(result instanceof ApplicationFailure, `expected an ApplicationFailure, got ${String(result)}`);
  assert.ok(!result.message.includes(SECRET), `message leaks the key: ${result.message}`);
  assert.ok(!(result.stack ?? '').includes(SECRET), `stack leaks the key: ${result.stack}`);
  return result;
}

describe('failure catalogue', { timeout: 10_000 }, () => {
  test('failure() types the failure and sets nonRetryable from the retry rule only', { timeout: 5_000 }, () => {
    assert.equal(failure('BridgeRefunded', 'x').nonRetryable, true);
    assert.equal(failure('BridgeTooExpensive', 'x').nonRetryable, false);
    assert.equal(failure('TransactionRevertedError', 'x').nonRetryable, false, "'policy' types are left to the workflow's retry policy");
    const built = failure('DeliveryMismatch', `fill looked up at ${URL_WITH_KEY}`, { leg: 'in' });
    assert.equal(built.type, 'DeliveryMismatch');
    assert.ok(!built.message.includes(SECRET));
    assert.deepEqual(built.details, [{ leg: 'in' }]);
  });

  test("every workflow's final types are catalogued and none of them is retried by rule", { timeout: 5_000 }, () => {
    for (const [workflow, types] of Object.entries(FINAL_TYPES)) {
      for (const type of types) {
        assert.ok(isFailureType(type), `${workflow}: ${type} is not catalogued`);
        assert.notEqual(FAILURES[type].retry, 'always', `${workflow}: ${type} is final there but catalogued as retried`);
      }
    }
    assert.deepEqual(FINAL_TYPES.transferStep, [
      'BridgeRouteRejected',
      'BridgeRefunded',
      'BridgeFailed',
      'DeliveryMismatch',
      'TransactionRevertedError',
      'NonceConsumedError',
    ]);
  });

  test('the service error classes keep their names (failure types match by name) on the PrivateRouteError base', { timeout: 5_000 }, () => {
    for (const [error, name] of [
      [new TransactionRevertedError('reverted'), 'TransactionRevertedError'],
      [new NonceConsumedError('used', 3), 'NonceConsumedError'],
      [new BridgeRouteError('no route'), 'BridgeRouteError'],
      [new IrisRateLimitedError('slow down', 1000), 'IrisRateLimitedError'],
      [new AspUnavailableError('down', 503), 'AspUnavailableError'],
    ] as const) {
      assert.equal(error.name, name);
      assert.ok(error instanceof PrivateRouteError);
    }
  });
});

describe('activity error translation', { timeout: 10_000 }, () => {
  test('provider errors become catalogued failures with their retry rule', { timeout: 5_000 }, () => {
    const cases: [Error, string, boolean][] = [
      [new BridgeRouteError('no route: amount too small'), 'BridgeRouteRejected', true],
      [new BridgeUnavailableError(`relay unreachable (${URL_WITH_KEY})`), 'BridgeUnavailable', false],
      [new IrisRateLimitedError('iris rate limit', 5_000), 'BridgeUnavailable', false],
      [new AspUnavailableError(`asp answered 503 at ${URL_WITH_KEY}`, 503), 'AspUnavailable', false],
      [new ProverError('proof failed', 'PROOF_GENERATION_FAILED'), 'ProverFailed', false],
      [new CctpBurnMismatchError('burn differs'), 'CctpBurnMismatch', true],
      [new VoidRefusedError('may still mine'), 'VoidRefused', true],
      [new TransactionRevertedError('0xabc reverted'), 'TransactionRevertedError', false],
      [new NonceConsumedError('nonce 4 used by another transaction', 9), 'NonceConsumedError', false],
    ];
    for (const [error, type, nonRetryable] of cases) {
      const result = translated(error);
      assert.equal(result.type, type, error.name);
      assert.equal(result.nonRetryable, nonRetryable, error.name);
      assert.ok(result.message.startsWith(error.message.slice(0, 12)), `${error.name}: ${result.message}`);
      assert.ok(result.stack?.includes('failures.test.ts'), 'keeps the frames of where it was thrown');
    }
  });

  test('viem errors keep their short message only: no URL, no request body', { timeout: 5_000 }, () => {
    const error = new HttpRequestError({
      url: URL_WITH_KEY,
      body: { method: 'eth_sendRawTransaction', params: ['0xsigned'] },
      status: 500,
      details: 'upstream failed',
    });
    assert.ok(error.message.includes(SECRET), 'the fixture carries the key');
    const result = translated(error);
    assert.equal(result.type, 'RpcFailed');
    assert.equal(result.nonRetryable, false);
    assert.match(result.message, /^HttpRequestError: HTTP request failed\.$/);
    assert.ok(!result.message.includes('eth_sendRawTransaction'));
  });

  test("an activity's own failure keeps its type and retry flag, with URLs redacted", { timeout: 5_000 }, () => {
    const own = ApplicationFailure.nonRetryable(`the fill at ${URL_WITH_KEY} paid nothing`, 'DeliveryMismatch');
    const result = translated(own);
    assert.equal(result.type, 'DeliveryMismatch');
    assert.equal(result.nonRetryable, true);
    assert.match(result.message, /^the fill at https:\/\/rpc\.example\.com\/… paid nothing$/);
    const clean = ApplicationFailure.retryable('short of funds', 'HubBalanceShort');
    assert.equal(translateActivityError(clean), clean, 'a clean failure passes as it is');
  });

  test('cancellation (and an AbortError) passes untouched; an unknown error keeps its name as type and stays retryable', { timeout: 5_000 }, () => {
    const cancelled = new CancelledFailure('CANCELLED');
    assert.equal(translateActivityError(cancelled), cancelled);
    const aborted = new DOMException('This operation was aborted', 'AbortError');
    assert.equal(translateActivityError(aborted), aborted, 'the SDK tells a cancelled activity by its AbortError');
    class StrangeError extends Error {
      override name = 'StrangeError';
    }
    const result = translated(new StrangeError(`boom at ${URL_WITH_KEY}`));
    assert.equal(result.type, 'StrangeError');
    assert.equal(result.nonRetryable, false);
    assert.equal(translated('a thrown string').type, 'Error');
  });

  test('the interceptor translates what the activity throws and returns what it returns', { timeout: 5_000 }, async () => {
    const running = new AbortController();
    const interceptor = activityErrors({ cancellationSignal: running.signal } as never).inbound;
    assert.ok(interceptor?.execute);
    const input = { args: [], headers: {} };
    assert.equal(await interceptor.execute(input, async () => 'done'), 'done');
    await assert.rejects(
      interceptor.execute(input, async () => {
        throw new BridgeRouteError('no route: pair not supported');
      }),
      (error: unknown) => error instanceof ApplicationFailure && error.type === 'BridgeRouteRejected' && error.nonRetryable === true,
    );
    // Once the activity is cancelled, what it throws is left for the SDK to report as the cancellation.
    running.abort();
    const thrown = new BridgeRouteError('no route: pair not supported');
    await assert.rejects(
      interceptor.execute(input, async () => {
        throw thrown;
      }),
      (error: unknown) => error === thrown,
    );
  });
});
