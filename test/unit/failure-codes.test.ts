import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FAILURE_CODES, type FailedAt, type FailureCode, failureCodeOf } from '../../src/domain/failureCodes.ts';

const ADDRESS = '0x000000000000000000000000000000000000bEEF';
const TX = `0x${'ab'.repeat(32)}`;

describe('failureCode: why a FAILED transfer failed, from what the FAILED write carries', { timeout: 10_000 }, () => {
  test('each error text the workflows write maps to its code', () => {
    const cases: Array<[error: string | null, code: FailureCode]> = [
      ['the transfer could not be started; do not deposit', 'NOT_STARTED'],
      ['no deposit received by the deadline 2026-11-23T01:02:03.456Z', 'DEPOSIT_EXPIRED'],
      [`underpaid: received 5 of 10 by the deadline 2026-11-23T01:02:03.456Z; refunded 5 to ${ADDRESS} (tx ${TX})`, 'DEPOSIT_TOO_SMALL'],
      [`ADDRESS_REUSE_REFUSED: the deposit came from the recipient ${ADDRESS}; refunded 10 to ${ADDRESS} (tx ${TX}) before the pool`, 'DEPOSIT_FROM_RECIPIENT'],
      ['failed by operator: customer asked to stop it', 'OPERATOR_FAILED'],
      ['cancelled in Temporal; see heldFunds for where the money is', 'OPERATOR_FAILED'],
      ['something no one planned for', 'INTERNAL'],
      [null, 'INTERNAL'],
    ];
    for (const [error, code] of cases) assert.equal(failureCodeOf(error), code, String(error));
  });

  test('an operator ending a parked route: the step and failure type it parked on name the cause', () => {
    const cases: Array<[failedAt: FailedAt, code: FailureCode]> = [
      [{ step: 'await-deposit', failureType: null }, 'DEPOSIT_TOO_SMALL'],
      [{ step: 'refund-deposit', failureType: 'TransactionRevertedError' }, 'REFUND_FAILED'],
      [{ step: 'check-funding', failureType: null }, 'INTERNAL'],
      [{ step: 'bridge-in', failureType: 'BridgeRouteRejected' }, 'BRIDGE_FAILED'],
      [{ step: 'bridge-in', failureType: 'BridgeRefunded' }, 'BRIDGE_FAILED'],
      [{ step: 'shield', failureType: null }, 'PRIVACY_POOL_FAILED'],
      [{ step: 'privacy-wait', failureType: 'AspRejected' }, 'PRIVACY_POOL_REJECTED'],
      [{ step: 'privacy-wait', failureType: 'AspReviewTimeout' }, 'PRIVACY_POOL_REJECTED'],
      [{ step: 'unshield', failureType: 'ProverFailed' }, 'PRIVACY_POOL_FAILED'],
      [{ step: 'bridge-out', failureType: 'BridgeFailed' }, 'PAYOUT_FAILED'],
      [{ step: 'a-step-from-the-future', failureType: null }, 'OPERATOR_FAILED'],
    ];
    for (const [failedAt, code] of cases) assert.equal(failureCodeOf('failed by operator: gave up', failedAt), code, JSON.stringify(failedAt));
  });

  test('the codes are a fixed list of distinct names', () => {
    assert.equal(new Set(FAILURE_CODES).size, FAILURE_CODES.length);
    for (const code of FAILURE_CODES) assert.match(code, /^[A-Z][A-Z_]+$/);
  });
});
