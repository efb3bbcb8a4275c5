import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type DepositTransfer, fundingOf, isDust, reusedAddress } from '../../src/domain/funding.ts';

const USER = '0x1111111111111111111111111111111111111111';
const SECOND = '0x2222222222222222222222222222222222222222';
const FORGER = '0x9999999999999999999999999999999999999999';
const RECIPIENT = '0x3333333333333333333333333333333333333333';
const AMOUNT = 250_000_000n; // 250 USDC

let n = 0;
const t = (from: string, value: bigint, blockNumber: number, logIndex = 0): DepositTransfer => ({
  from,
  value,
  blockNumber,
  logIndex,
  txHash: `0x${(++n).toString(16).padStart(64, '0')}`,
});

describe('who funded a route (src/domain/funding.ts)', { timeout: 10_000 }, () => {
  const userDeposit = t(USER, AMOUNT, 10, 1);
  const cases: Array<{ name: string; transfers: DepositTransfer[]; senders: string[]; client: string | null; tied: string[]; complete: boolean; tx?: string }> =
    [
      { name: 'one deposit', transfers: [userDeposit], senders: [USER], client: USER, tied: [USER], complete: true, tx: userDeposit.txHash },
      {
        name: 'a zero-value transferFrom in the same block, before the deposit, names nobody',
        transfers: [t(FORGER, 0n, 10, 0), userDeposit],
        senders: [USER],
        client: USER,
        tied: [USER],
        complete: true,
        tx: userDeposit.txHash,
      },
      {
        name: 'a zero-value transferFrom "from the recipient" ties nobody',
        transfers: [t(RECIPIENT, 0n, 9), userDeposit],
        senders: [USER],
        client: USER,
        tied: [USER],
        complete: true,
      },
      {
        name: 'dust after the amount changes nothing',
        transfers: [userDeposit, t(FORGER, 100_000n, 11), t(FORGER, AMOUNT * 2n, 12)],
        senders: [USER],
        client: USER,
        tied: [USER],
        complete: true,
        tx: userDeposit.txHash,
      },
      {
        name: 'dust before the deposit is tied but neither a sender nor the client',
        transfers: [t(FORGER, 100_000n, 9), userDeposit],
        senders: [USER],
        client: USER,
        tied: [FORGER, USER],
        complete: true,
      },
      {
        name: 'a split deposit: both senders, the larger is the client',
        transfers: [t(SECOND, 100_000_000n, 8), t(USER, 150_000_000n, 9)],
        senders: [SECOND, USER],
        client: USER,
        tied: [SECOND, USER],
        complete: true,
      },
      {
        name: 'one sender in two transfers counts once, and its total wins',
        transfers: [t(USER, 60_000_000n, 8), t(SECOND, 100_000_000n, 9), t(USER, 90_000_000n, 10)],
        senders: [USER, SECOND],
        client: USER,
        tied: [USER, SECOND],
        complete: true,
      },
      {
        name: 'not yet the amount: what came so far, incomplete',
        transfers: [t(USER, 100_000_000n, 8)],
        senders: [USER],
        client: USER,
        tied: [USER],
        complete: false,
      },
      { name: 'only pokes: nobody', transfers: [t(FORGER, 0n, 8), t(FORGER, 1n, 9)], senders: [], client: null, tied: [FORGER], complete: false },
      {
        name: 'a log seen twice (the reorg margin) counts once',
        transfers: [userDeposit, userDeposit, t(FORGER, 0n, 11)],
        senders: [USER],
        client: USER,
        tied: [USER],
        complete: true,
      },
      {
        name: 'the order of arrival, not of the list: a non-dust transfer after the amount is not a sender',
        transfers: [t(SECOND, AMOUNT, 12), userDeposit],
        senders: [USER],
        client: USER,
        tied: [USER],
        complete: true,
      },
    ];
  for (const c of cases) {
    test(c.name, () => {
      const funding = fundingOf(c.transfers, AMOUNT);
      assert.deepEqual(funding.senders, c.senders);
      assert.equal(funding.client, c.client);
      assert.deepEqual(funding.tiedAddresses, c.tied);
      assert.equal(funding.complete, c.complete);
      if (c.tx) assert.equal(funding.txHash, c.tx);
    });
  }

  test('dust is under 1 % of the amount', () => {
    assert.equal(isDust(2_499_999n, AMOUNT), true);
    assert.equal(isDust(2_500_000n, AMOUNT), false);
    assert.equal(isDust(0n, AMOUNT), true);
  });

  test('a route funded from its recipient, in any case of the address, is reused; a zero-value forgery is not', () => {
    assert.equal(reusedAddress(fundingOf([t(RECIPIENT, AMOUNT, 5)], AMOUNT), RECIPIENT.toUpperCase().replace('0X', '0x')), RECIPIENT);
    assert.equal(reusedAddress(fundingOf([t(RECIPIENT, 1n, 4), t(USER, AMOUNT, 5)], AMOUNT), RECIPIENT), RECIPIENT, 'even dust from the recipient ties it');
    assert.equal(reusedAddress(fundingOf([t(RECIPIENT, 0n, 4), t(USER, AMOUNT, 5)], AMOUNT), RECIPIENT), null);
    assert.equal(
      reusedAddress(fundingOf([t(USER, AMOUNT, 5), t(RECIPIENT, AMOUNT, 6)], AMOUNT), RECIPIENT),
      null,
      'after the amount: a stray, not the funding',
    );
  });
});
