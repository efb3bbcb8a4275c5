import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { statusHistoryOf, statusHistoryUpTo } from '../../src/transfers/statusHistory.ts';

const created = new Date('2026-11-27T00:00:00.000Z');
const at = (seconds: number) => new Date(created.getTime() + seconds * 1000);
const facts: Parameters<typeof statusHistoryOf>[0] = {
  createdAt: created,
  updatedAt: at(90),
  sourceChainId: 10,
  destChainId: 30,
  depositTxHash: '0xd0',
  bridgeInTxHash: '0xb1',
  payoutTxHash: '0xf2',
};

describe('the status history of the full view', () => {
  const cases: { name: string; reached: { status: string; reachedAt: Date }[]; facts?: Partial<typeof facts>; expected: [string, number, string | null][] }[] =
    [
      { name: 'just created', reached: [], expected: [['AWAITING_DEPOSIT', 0, null]] },
      {
        name: 'completed: each hop with its transaction, the pool steps without',
        reached: [
          { status: 'BRIDGING_IN', reachedAt: at(10) },
          { status: 'RECEIVED_ON_HUB', reachedAt: at(20) },
          { status: 'SHIELDED', reachedAt: at(30) },
          { status: 'UNSHIELD_SENT', reachedAt: at(60) },
          { status: 'BRIDGING_OUT', reachedAt: at(70) },
          { status: 'COMPLETED', reachedAt: at(80) },
        ],
        expected: [
          ['AWAITING_DEPOSIT', 0, null],
          ['BRIDGING_IN', 10, '0xd0'],
          ['RECEIVED_ON_HUB', 20, '0xb1'],
          ['SHIELDED', 30, null],
          ['UNSHIELD_SENT', 60, null],
          ['BRIDGING_OUT', 70, null],
          ['COMPLETED', 80, '0xf2'],
        ],
      },
      {
        name: 'a hash not seen yet stays null',
        reached: [{ status: 'BRIDGING_IN', reachedAt: at(10) }],
        facts: { depositTxHash: null },
        expected: [
          ['AWAITING_DEPOSIT', 0, null],
          ['BRIDGING_IN', 10, null],
        ],
      },
      {
        name: 'could not be started: recorded FAILED at time 0, shown at its update',
        reached: [{ status: 'FAILED', reachedAt: new Date(0) }],
        expected: [
          ['AWAITING_DEPOSIT', 0, null],
          ['FAILED', 90, null],
        ],
      },
      {
        name: 'an AWAITING_DEPOSIT row is not shown twice',
        reached: [
          { status: 'AWAITING_DEPOSIT', reachedAt: at(1) },
          { status: 'FAILED', reachedAt: at(5) },
        ],
        expected: [
          ['AWAITING_DEPOSIT', 0, null],
          ['FAILED', 5, null],
        ],
      },
    ];
  for (const { name, reached, facts: override, expected } of cases) {
    test(name, () => {
      const history = statusHistoryOf({ ...facts, ...override }, reached);
      assert.deepEqual(
        history,
        expected.map(([status, seconds, txHash]) => ({ status, at: at(seconds).toISOString(), txHash, chainId: CHAIN_OF[txHash ?? ''] ?? null })),
      );
    });
  }

  test('each hash names its chain: the deposit and the bridge send on the source chain, the payment on the destination', () => {
    const history = statusHistoryOf(facts, [
      { status: 'BRIDGING_IN', reachedAt: at(10) },
      { status: 'RECEIVED_ON_HUB', reachedAt: at(20) },
      { status: 'COMPLETED', reachedAt: at(80) },
    ]);
    assert.deepEqual(
      history.map((h) => [h.status, h.chainId]),
      [
        ['AWAITING_DEPOSIT', null],
        ['BRIDGING_IN', 10],
        ['RECEIVED_ON_HUB', 10],
        ['COMPLETED', 30],
      ],
    );
  });

  const upTo: [string, string, string[]][] = [
    ['an event behind the view ends the history at its status', 'RECEIVED_ON_HUB', ['AWAITING_DEPOSIT', 'BRIDGING_IN', 'RECEIVED_ON_HUB']],
    ['the latest status keeps it whole', 'FAILED', ['AWAITING_DEPOSIT', 'BRIDGING_IN', 'RECEIVED_ON_HUB', 'FAILED', 'BRIDGING_OUT', 'FAILED']],
    [
      'a status not in it (a row not read yet) keeps it whole',
      'COMPLETED',
      ['AWAITING_DEPOSIT', 'BRIDGING_IN', 'RECEIVED_ON_HUB', 'FAILED', 'BRIDGING_OUT', 'FAILED'],
    ],
  ];
  for (const [name, status, expected] of upTo) {
    test(`history up to an event's status: ${name}`, () => {
      const history = statusHistoryOf(facts, [
        { status: 'BRIDGING_IN', reachedAt: at(10) },
        { status: 'RECEIVED_ON_HUB', reachedAt: at(20) },
        { status: 'FAILED', reachedAt: at(30) },
        { status: 'BRIDGING_OUT', reachedAt: at(40) },
        { status: 'FAILED', reachedAt: at(50) },
      ]);
      assert.deepEqual(
        statusHistoryUpTo(history, status).map((h) => h.status),
        expected,
      );
    });
  }
});

const CHAIN_OF: Record<string, number> = { '0xd0': 10, '0xb1': 10, '0xf2': 30 };
