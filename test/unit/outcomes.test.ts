import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { depositedAmountOf, type LedgerMovement, refundsOf } from '../../src/transfers/outcomes.ts';

const USDC = '0x2222222222222222222222222222222222222222';
const LOOKALIKE = '0x4444444444444444444444444444444444444444';
const route = { sourceToken: USDC, symbol: 'USDC' };
const tx = (digit: string) => `0x${digit.repeat(64)}`;
const entry = (kind: string, amount: string, extra: Partial<LedgerMovement> = {}): LedgerMovement => ({
  kind,
  chainId: 8453,
  token: USDC,
  amount,
  txHash: null,
  ...extra,
});

describe('outcomes: what the deposit address received and what went back', { timeout: 10_000 }, () => {
  test('depositedAmount: what the route took, else the transfers seen while it waited, else "0"', () => {
    const cases: Array<[what: string, ledger: LedgerMovement[], deposits: string[], expected: string]> = [
      ['nothing arrived', [], [], '0'],
      ['short deposits, summed', [], ['4000000', '1500000', '0'], '5500000'],
      ['taken: the ledger says what', [entry('received', '10000000')], ['9999999'], '10000000'],
      ['the token compared without case', [entry('received', '7', { token: USDC.toUpperCase().replace('0X', '0x') })], [], '7'],
      ['another token received is not the deposit', [entry('received', '5', { token: LOOKALIKE })], ['3'], '3'],
      ['a refund is not a deposit', [entry('refunded', '4000000', { txHash: tx('a') })], ['4000000'], '4000000'],
    ];
    for (const [what, ledger, deposits, expected] of cases) assert.equal(depositedAmountOf(route, ledger, deposits), expected, what);
  });

  test("refunds: the ledger's refunded entries in booking order, with the symbol only for the route's own token", () => {
    const ledger = [
      entry('received', '10000000'),
      entry('refunded', '4000000', { txHash: tx('a') }),
      entry('paid', '9000000', { txHash: tx('b') }),
      entry('refunded', '3', { token: LOOKALIKE, txHash: tx('c') }),
    ];
    assert.deepEqual(refundsOf(route, ledger, new Map([[8453, 'https://basescan.org']])), [
      {
        status: 'CONFIRMED',
        amount: '4000000',
        token: USDC,
        symbol: 'USDC',
        chainId: 8453,
        txHash: tx('a'),
        explorerUrl: `https://basescan.org/tx/${tx('a')}`,
      },
      { status: 'CONFIRMED', amount: '3', token: LOOKALIKE, symbol: null, chainId: 8453, txHash: tx('c'), explorerUrl: `https://basescan.org/tx/${tx('c')}` },
    ]);
    assert.equal(refundsOf(route, ledger, new Map())[0]?.explorerUrl, null, 'a chain without a known explorer: no link');
    assert.deepEqual(refundsOf(route, [entry('received', '1')], new Map()), []);
  });
});
