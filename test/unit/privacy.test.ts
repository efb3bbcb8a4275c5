import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { amountClassKey, amountClassOf, isAmountClass, nextAmountClass, previousAmountClass, roundingBps } from '../../src/privacy/amountClass.ts';
import {
  anonymitySetMembers,
  anonymitySetSize,
  clientIdentities,
  type PoolNoteFacts,
  type PoolStateView,
  unsettledMembers,
} from '../../src/privacy/anonymitySet.ts';
import { couldLeaveIn, nextEpochStart, nextExitEpoch } from '../../src/privacy/exitEpochs.ts';
import { publicEndDelayMs, publicEndShownAt, publicStatusAt } from '../../src/transfers/publicView.ts';
import { drawPrivacyPlan } from '../../src/transfers/transferService.ts';

const usdc = (whole: number) => BigInt(Math.round(whole * 1e6));

describe('amount classes', () => {
  test('round a value down to three leading digits in steps of 1, 2 or 5', () => {
    const table: Array<[bigint, bigint]> = [
      [usdc(100), usdc(100)],
      [usdc(100.99), usdc(100)],
      [usdc(101.1), usdc(101)],
      [usdc(98.37), usdc(98)],
      [usdc(98.5), usdc(98.5)],
      [usdc(199.99), usdc(199)],
      [usdc(249.9), usdc(248)],
      [usdc(250), usdc(250)],
      [usdc(499.99), usdc(498)],
      [usdc(500), usdc(500)],
      [usdc(504.99), usdc(500)],
      [usdc(1234.56), usdc(1230)],
      [usdc(0.5037), usdc(0.5)],
      [10n ** 18n + 123n, 10n ** 18n],
      [999n, 999n],
      [1000n, 1000n],
      [1009n, 1000n],
      [2039n, 2020n],
      [0n, 0n],
    ];
    for (const [value, expected] of table) assert.equal(amountClassOf(value), expected, `${value}`);
  });

  test('a class is the largest grid value at or below the value, and costs less than 1 % of it', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 100n, max: 10n ** 30n }), (value) => {
        const cls = amountClassOf(value);
        assert.ok(cls <= value && isAmountClass(cls));
        assert.ok(nextAmountClass(cls) > value, 'no grid value between the class and the value');
        assert.ok((value - cls) * 100n < value, 'the rounding is below 1 %');
        assert.ok(roundingBps(value) < 100);
        assert.equal(amountClassOf(cls), cls);
      }),
    );
  });

  test('classes are ordered and the grid walks both ways', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 24n }), fc.bigInt({ min: 0n, max: 10n ** 24n }), (a, b) => {
        if (a <= b) assert.ok(amountClassOf(a) <= amountClassOf(b));
        const cls = amountClassOf(a);
        assert.equal(previousAmountClass(nextAmountClass(cls)), cls);
      }),
    );
    assert.equal(nextAmountClass(usdc(199)), usdc(200));
    assert.equal(nextAmountClass(usdc(200)), usdc(202));
    assert.equal(nextAmountClass(usdc(995)), usdc(1000));
    assert.equal(previousAmountClass(usdc(1000)), usdc(995));
    assert.equal(previousAmountClass(0n), null);
    assert.throws(() => nextAmountClass(usdc(98.37)), /not an amount class/);
  });

  test('routes of close but different outputs share a class; the key names destination and class', () => {
    assert.equal(amountClassOf(usdc(98.51)), amountClassOf(usdc(98.99)));
    assert.equal(amountClassKey(10, '0xAbC', usdc(98.5)), `10:0xabc:${usdc(98.5)}`);
  });

  test('the mean rounding over amounts spread evenly on a log scale is about 35 bps', () => {
    let total = 0;
    const samples = 20_000;
    for (let i = 0; i < samples; i++) {
      // 10 to 100,000 USDC, deterministic and spread evenly in log
      const value = BigInt(Math.floor(10 ** (7 + (4 * (i + 0.5)) / samples)));
      total += Number(((value - amountClassOf(value)) * 1_000_000n) / value) / 100;
    }
    const mean = total / samples;
    assert.ok(mean > 30 && mean < 40, `mean rounding ${mean.toFixed(1)} bps`);
  });
});

describe('anonymity set', () => {
  const CLASS = '3:0xdd:98000000';
  const note = (routeId: string, over: Partial<PoolNoteFacts> = {}): PoolNoteFacts => ({
    routeId,
    amountClass: CLASS,
    commitment: `c-${routeId}`,
    label: `l-${routeId}`,
    value: 100n,
    client: `client-${routeId}`,
    ragequit: false,
    depositedAt: 0,
    approvedAt: 0,
    ...over,
  });
  const everything: PoolStateView = { inState: () => true, approved: () => true };
  const candidates = (own: PoolNoteFacts, notes: PoolNoteFacts[], state = everything) => anonymitySetMembers(own, notes, state, 100n).map((m) => m.routeId);

  test('candidates: the notes of the class an observer cannot exclude', () => {
    const own = note('own');
    const cases: Array<[string, PoolNoteFacts[], string[], PoolStateView?]> = [
      ['alone', [own], []],
      ['peers of the class, withdrawn or not', [own, note('a'), note('b')], ['a', 'b']],
      ['another class pays another amount', [own, note('a', { amountClass: '3:0xdd:98500000' })], []],
      ['another destination token', [own, note('a', { amountClass: '3:0xee:98000000' })], []],
      ['a ragequit note', [own, note('a', { ragequit: true })], []],
      ['a pre-class route has a class of its own', [note('own', { amountClass: null }), note('a', { amountClass: null })], []],
      ['a peer not approved at the ASP root', [own, note('a'), note('b')], ['a'], { inState: () => true, approved: (label) => label !== 'l-b' }],
      ['a peer deposited after the proof’s state root', [own, note('a'), note('b')], ['b'], { inState: (c) => c !== 'c-a', approved: () => true }],
      ['a note worth less than the withdrawal takes', [own, note('a', { value: 99n }), note('b', { value: 101n })], ['b']],
    ];
    for (const [what, notes, expected, state] of cases) assert.deepEqual(candidates(notes[0]!, notes, state), expected, what);
    const members = anonymitySetMembers(
      own,
      [note('a', { client: 'x' }), note('b', { client: 'client-own' }), note('c', { client: 'x' }), note('d', { client: null })],
      everything,
    );
    assert.deepEqual(
      members.map((m) => m.client),
      [1, 0, 1, 2],
      'clients are numbered within the set, the route’s own client is 0',
    );
  });

  test('candidates in an exit epoch: only notes that could be leaving in it', () => {
    const own = note('own');
    // Exit epoch [10 000, 11 000) ms; the gate epoch before it [9 000, 10 000); routes wait at most 2 000 ms.
    const timing = { startsAt: 10_000, epochMs: 1_000, maxWaitMs: 2_000 };
    const cases: Array<[string, Partial<PoolNoteFacts>, boolean]> = [
      ['approved during the gate epoch', { depositedAt: 8_500, approvedAt: 9_500 }, true],
      ['approved long before, deposited within the longest wait', { depositedAt: 6_000, approvedAt: 6_100 }, true],
      ['approved just before the exit epoch', { depositedAt: 9_000, approvedAt: 9_999 }, true],
      ['approved as the exit epoch began: leaves in the one after', { depositedAt: 9_000, approvedAt: 10_000 }, false],
      ['never seen approved', { depositedAt: 9_000, approvedAt: null }, false],
      // 4 999 + 2 000 of longest wait + 2 000 of slack < 9 000: it would have left before the gate epoch.
      ['past its longest wait before the gate epoch (stuck)', { depositedAt: 4_999, approvedAt: 5_000 }, false],
      ['at the edge of its longest wait and slack', { depositedAt: 5_000, approvedAt: 5_000 }, true],
    ];
    const aged = { ...timing, minPeerAgeMs: 1_500 };
    for (const [what, over, expected] of [
      ['in the pool 1 500 ms when the epoch began', { depositedAt: 8_500, approvedAt: 9_000 }, true],
      ['a deposit 1 000 ms before the epoch: too young to count yet', { depositedAt: 9_000, approvedAt: 9_500 }, false],
    ] as const) {
      assert.equal(couldLeaveIn(over, aged), expected, what);
    }
    // Leaving at its longest wait: only notes whose own wait (from their deposit's epoch start) had ended by 10 000.
    const due = { ...timing, dueOnly: true };
    for (const [what, over, expected] of [
      ['deposited in the epoch at 8 000: its wait ended at 10 000', { depositedAt: 8_900, approvedAt: 9_000 }, true],
      ['deposited in the epoch at 9 000: still waiting until 11 000', { depositedAt: 9_000, approvedAt: 9_500 }, false],
    ] as const) {
      assert.equal(couldLeaveIn(over, due), expected, what);
      assert.equal(couldLeaveIn(over, timing), true, `${what}: counted by a route whose set was reached`);
    }
    for (const [what, over, expected] of cases) {
      assert.equal(couldLeaveIn({ depositedAt: 0, approvedAt: 0, ...over }, timing), expected, what);
      assert.deepEqual(
        anonymitySetMembers(own, [own, note('a', over)], everything, 0n, timing).map((m) => m.routeId),
        expected ? ['a'] : [],
        what,
      );
    }
    assert.deepEqual(
      anonymitySetMembers(own, [own, note('a', { depositedAt: 0, approvedAt: 50_000 })], everything).map((m) => m.routeId),
      ['a'],
      'without an exit epoch (routes from before them) time does not count',
    );
  });

  test('one client: routes that share the creator or the deposit sender, transitively', () => {
    const cases: Array<[string, Array<[string, string | null, string | null]>, string[][]]> = [
      [
        'each its own',
        [
          ['a', 'k1', 's1'],
          ['b', 'k2', 's2'],
        ],
        [['a'], ['b']],
      ],
      [
        'one creator, two senders',
        [
          ['a', 'k1', 's1'],
          ['b', 'k1', 's2'],
        ],
        [['a', 'b']],
      ],
      [
        'two creators (IPs), one sender: one client',
        [
          ['a', 'k1', 's1'],
          ['b', 'k2', 's1'],
        ],
        [['a', 'b']],
      ],
      [
        'a chain: a–b by sender, b–c by creator',
        [
          ['a', 'k1', 's1'],
          ['b', 'k2', 's1'],
          ['c', 'k2', 's3'],
          ['d', 'k4', 's4'],
        ],
        [['a', 'b', 'c'], ['d']],
      ],
      [
        'sender unknown',
        [
          ['a', 'k1', null],
          ['b', 'k1', 's2'],
          ['c', 'k3', null],
        ],
        [['a', 'b'], ['c']],
      ],
      [
        'both unknown: the unknown client',
        [
          ['a', null, null],
          ['b', null, null],
        ],
        [['a', 'b']],
      ],
    ];
    for (const [what, rows, groups] of cases) {
      const identities = clientIdentities(rows.map(([routeId, client, sender]) => ({ routeId, client, sender })));
      const grouped = new Map<string | null, string[]>();
      for (const [routeId, identity] of identities) grouped.set(identity, [...(grouped.get(identity) ?? []), routeId]);
      assert.deepEqual([...grouped.values()].map((g) => g.sort()).sort(), groups, what);
    }
    // Four routes of a class from four addresses but one sender: a victim among them is hidden by nobody.
    const notes = ['v', 'x1', 'x2', 'x3'].map((id) => ({ routeId: id, client: `ip-${id}`, sender: id === 'v' ? 'victim' : 'sybil' }));
    const identities = clientIdentities(notes);
    assert.equal(
      anonymitySetSize({ own: 'v', candidates: ['x1', 'x2', 'x3'], clientOf: (id) => identities.get(id) }),
      1,
      'one sender behind three addresses is counted out as one client',
    );
  });

  test('exit epochs follow the clock: a gate in one epoch leaves in the next', () => {
    const table: Array<[number, number, number]> = [
      [0, 1800, 1_800_000],
      [1, 1800, 1_800_000],
      [1_799_999, 1800, 1_800_000],
      [1_800_000, 1800, 3_600_000],
      [7_000, 3, 9_000],
    ];
    for (const [now, seconds, expected] of table) assert.equal(nextEpochStart(now, seconds), expected, `${now} ms, epochs of ${seconds} s`);
    assert.deepEqual(nextExitEpoch({ epochSeconds: 3, maxWaitSeconds: 20 }, 7_000), { startsAt: 9_000, epochMs: 3_000, maxWaitMs: 20_000 });
  });

  type Withdrawal = { routeId: string; candidates: string[] };
  /** The set of `own` with these candidates and withdrawals; every route its own client unless `clients` says otherwise. */
  const size = (
    own: string,
    candidates: string[],
    before: Withdrawal[] = [],
    after: Withdrawal[] = [],
    clients: Record<string, string> = {},
    excluded: string[] = [],
  ) => anonymitySetSize({ own, candidates, withdrawals: { before, after }, clientOf: (id) => clients[id] ?? id, excluded: new Set(excluded) });

  /**
   * The observer's exact odds by brute force: every matching of the withdrawals (ours at `at`) to distinct candidates,
   * with nobody's or any one client's routes (notes and withdrawals) taken away; ⌊1 / the largest chance⌋ that ours
   * spent some note or that some withdrawal spent our note, the smallest over those observers.
   */
  function bruteForce(own: string, chain: Withdrawal[], at: number, clientOf: (id: string) => string, excluded: string[] = []): number {
    const routes = new Set(chain.flatMap((w) => w.candidates).filter((id) => id !== own));
    const observers = [null, ...new Set([...routes].map(clientOf))];
    return Math.min(
      ...observers.map((observer) => {
        const gone = (id: string) => excluded.includes(id) || (id !== own && observer !== null && clientOf(id) === observer);
        const kept = chain
          .map((w, i) => ({ i, candidates: w.candidates.filter((id) => !gone(id)), gone: w.routeId !== own && gone(w.routeId) }))
          .filter((w) => !w.gone);
        const ours = kept.findIndex((w) => w.i === at);
        let total = 0;
        const counts = new Map<string, number>();
        const bump = (key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);
        const walk = (k: number, used: Set<string>, picks: string[]) => {
          if (k === kept.length) {
            total++;
            bump(`ours:${picks[ours]}`);
            const j = picks.indexOf(own);
            if (j !== -1) bump(`took-own:${j}`);
            return;
          }
          for (const id of kept[k]!.candidates) if (!used.has(id)) walk(k + 1, new Set([...used, id]), [...picks, id]);
        };
        walk(0, new Set(), []);
        return total === 0 ? 1 : Math.max(1, Math.floor(total / Math.max(...counts.values())));
      }),
    );
  }

  test('size: what the best guess of an observer leaves, either way', () => {
    // Any one client may be the observer (it knows its own routes), so a set counts what is left without the worst one.
    const all3 = (id: string) => ({ routeId: id, candidates: ['a', 'b', 'c'] });
    const cases: Array<[string, number, number]> = [
      ['alone', 1, size('r', [])],
      ['three peers from three clients, nobody left yet: any one of them may be the observer', 3, size('r', ['a', 'b', 'c'])],
      ['the last of three that left together', 2, size('c', ['a', 'b'], [all3('a'), all3('b')])],
      ['the second of three that left together', 2, size('b', ['a', 'c'], [all3('a')], [all3('c')])],
      ['the first of three that left together, once the others left too', 2, size('a', ['b', 'c'], [], [all3('b'), all3('c')])],
      ['a peer left before the route deposited, and the other peer is the observer', 1, size('r', ['a', 'b'], [{ routeId: 'a', candidates: ['a', 'b'] }])],
      ['a peer left before the route deposited, among many clients', 3, size('r', ['a', 'b', 'c', 'd'], [{ routeId: 'a', candidates: ['a', 'b'] }])],
      [
        'an older proof mined later comes first: it could only take the early notes',
        1,
        size('r2', ['r0', 'r1'], [{ routeId: 'r1', candidates: ['r0', 'r1'] }]),
      ],
      ['a later withdrawal that may have taken the route’s note', 2, size('r', ['a', 'b'], [], [{ routeId: 'a', candidates: ['a', 'b', 'r'] }])],
      ['a settled withdrawal (it could take only its own note) changes nothing', 3, size('r', ['a', 'b', 'c'], [{ routeId: 'x', candidates: ['x'] }])],
      ['one client holds every peer: taking it away leaves the route alone', 1, size('r', ['a', 'b', 'c'], [], [], { a: 'x', b: 'x', c: 'x' })],
      ['two of the three peers are the route’s own client’s', 2, size('r', ['a', 'b', 'c'], [], [], { r: 'me', a: 'me', b: 'me' })],
      ['a ragequit peer no longer counts', 2, size('r', ['a', 'b', 'c'], [], [], {}, ['c'])],
    ];
    for (const [what, expected, got] of cases) assert.equal(got, expected, what);
  });

  test('later withdrawals that could also take notes the route never saw do not count as taking the route’s', () => {
    // A proved with B and C; D and E deposited after, and the four others left later.
    const after = [
      { routeId: 'B', candidates: ['A', 'B', 'C'] },
      { routeId: 'C', candidates: ['A', 'B', 'C', 'D'] },
      { routeId: 'D', candidates: ['A', 'B', 'C', 'D', 'E'] },
      { routeId: 'E', candidates: ['A', 'B', 'C', 'D', 'E'] },
    ];
    const chain = [{ routeId: 'A', candidates: ['A', 'B', 'C'] }, ...after];
    assert.equal(
      size('A', ['B', 'C'], [], after),
      bruteForce('A', chain, 0, (id) => id),
    );
    assert.ok(size('A', ['B', 'C'], [], after) >= 2);
  });

  test('a withdrawal records only the candidates leading withdrawals have not certainly spent', () => {
    // x and y could only take x and y between them: both are spent, whoever the observer is.
    const withdrawals = {
      before: [
        { routeId: 'x', candidates: ['x', 'y'] },
        { routeId: 'y', candidates: ['x', 'y'] },
        { routeId: 'a', candidates: ['x', 'y', 'a', 'b'] },
      ],
      after: [],
    };
    const members = ['x', 'y', 'a', 'b'].map((routeId, i) => ({ routeId, client: i + 1 }));
    assert.deepEqual(
      unsettledMembers(members, withdrawals).map((m) => m.routeId),
      ['a', 'b'],
    );
    assert.equal(size('r', ['x', 'y', 'a', 'b'], withdrawals.before), size('r', ['a', 'b'], withdrawals.before));
  });

  test('with each withdrawal proved against the pool as it then was, the size is the observer’s exact odds (brute force)', () => {
    // A class's history: deposits and withdrawals in time. Each withdrawal spends a note still unspent (the truth,
    // which nobody outside sees), its candidates are every deposit before it; clients are drawn from a few.
    const event = fc.constantFrom('deposit', 'withdraw');
    fc.assert(
      fc.property(fc.array(event, { minLength: 1, maxLength: 9 }), fc.array(fc.nat(), { minLength: 20, maxLength: 20 }), (events, picks) => {
        let pick = 0;
        const next = () => picks[pick++ % picks.length]!;
        const deposits: string[] = [];
        const unspent: string[] = [];
        const chain: Withdrawal[] = [];
        for (const e of events) {
          if (e === 'deposit') {
            deposits.push(`d${deposits.length}`);
            unspent.push(deposits.at(-1)!);
          } else if (unspent.length > 0) {
            const [spent] = unspent.splice(next() % unspent.length, 1);
            chain.push({ routeId: spent!, candidates: [...deposits] });
          }
        }
        if (deposits.length === 0) return;
        // Our route: one that withdrew, or one still unspent withdrawing now.
        const choice = next() % (chain.length + unspent.length);
        const at = choice < chain.length ? choice : chain.length;
        const full = choice < chain.length ? chain : [...chain, { routeId: unspent[choice - chain.length]!, candidates: [...deposits] }];
        const own = full[at]!.routeId;
        const clients = Object.fromEntries(deposits.map((d) => [d, `client${next() % 3}`]));
        const clientOf = (id: string) => clients[id] ?? id;
        const reported = anonymitySetSize({
          own,
          candidates: full[at]!.candidates.filter((id) => id !== own),
          withdrawals: { before: full.slice(0, at), after: full.slice(at + 1) },
          clientOf,
        });
        assert.equal(reported, bruteForce(own, full, at, clientOf), `history ${events.join(' ')}, ours ${own} at ${at}, clients ${JSON.stringify(clients)}`);
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 300) },
    );
  });
});

describe('privacy plan', () => {
  const settings = {
    exitEpochSeconds: 600,
    publicEndDelaySeconds: 0,
    publicEndHoldSeconds: 0,
    minAnonymitySet: 5,
    maxAnonymitySet: 50,
    maxWaitSeconds: 600,
    pollSeconds: 30,
    reviewTimeoutSeconds: 3600,
  };

  test('carries the service’s exit epochs and never lowers the service’s anonymity set', () => {
    for (const [requested, expected] of [
      [2, 5],
      [8, 8],
      [undefined, 5],
    ] as const) {
      const plan = drawPrivacyPlan(settings, requested);
      assert.equal(plan.minAnonymitySet, expected);
      assert.equal(plan.exitEpochSeconds, 600);
      assert.equal(plan.delaySeconds, undefined, 'no delay of its own: the route leaves at its moment of the next exit epoch');
    }
  });

  test('refuses an anonymity set above the configured maximum', () => {
    assert.throws(() => drawPrivacyPlan(settings, 51), /minAnonymitySet must be at most 50/);
  });
});

describe('the public view (no statusToken)', () => {
  const at = (s: number) => new Date(s * 1000);
  const history = [
    { status: 'AWAITING_DEPOSIT', reachedAt: at(0) },
    { status: 'BRIDGING_IN', reachedAt: at(95) },
    { status: 'RECEIVED_ON_HUB', reachedAt: at(130) },
    { status: 'SHIELDED', reachedAt: at(131) },
    { status: 'UNSHIELD_SENT', reachedAt: at(250) },
    { status: 'BRIDGING_OUT', reachedAt: at(251) },
    { status: 'COMPLETED', reachedAt: at(290) },
  ];
  test('moves only as exit epochs begin, folds the pool phase into BRIDGING_IN, and shows the end after its delay', () => {
    // Epochs of 100 s; the end shows 150 s after it happened.
    const cases: Array<[number, string, number]> = [
      [50, 'AWAITING_DEPOSIT', 0],
      [99, 'AWAITING_DEPOSIT', 0],
      [100, 'BRIDGING_IN', 1], // funded at 95: shown once the epoch at 100 began
      [260, 'BRIDGING_IN', 1], // shielded and withdrawn meanwhile: never shown
      [399, 'BRIDGING_IN', 1], // completed at 290, public from 440, shown from the epoch at 500
      [499, 'BRIDGING_IN', 1],
      [500, 'COMPLETED', 2],
    ];
    for (const [now, status, seq] of cases) {
      const shown = publicStatusAt(history, { now: now * 1000, epochSeconds: 100, delayMs: 150_000 });
      assert.deepEqual([shown.status, shown.seq], [status, seq], `at ${now} s`);
    }
    const unfunded = [
      { status: 'AWAITING_DEPOSIT', reachedAt: at(0) },
      { status: 'FAILED', reachedAt: at(30) },
    ];
    assert.equal(publicStatusAt(unfunded, { now: 150_000, epochSeconds: 100, delayMs: 150_000 }).status, 'AWAITING_DEPOSIT');
    assert.equal(publicStatusAt(unfunded, { now: 200_000, epochSeconds: 100, delayMs: 150_000 }).status, 'FAILED');
  });

  test('the moment the end first shows (when held webhooks go out) is the one the view changes at', () => {
    const cases: Array<[endedAt: number, delay: number, shownAt: number]> = [
      [290, 150, 500],
      [290, 0, 300],
      [300, 0, 300], // on an epoch start: shown at once
      [250, 50, 300],
      [251, 50, 400],
    ];
    for (const [endedAt, delay, shownAt] of cases) {
      assert.equal(
        publicEndShownAt(endedAt * 1000, { epochSeconds: 100, delayMs: delay * 1000, fundedAt: 0 }),
        shownAt * 1000,
        `ended ${endedAt}, delay ${delay}`,
      );
      const ended = [
        { status: 'BRIDGING_IN', reachedAt: at(0) },
        { status: 'COMPLETED', reachedAt: at(endedAt) },
      ];
      const view = (s: number) => publicStatusAt(ended, { now: s, epochSeconds: 100, delayMs: delay * 1000 }).status;
      assert.equal(view(shownAt * 1000 - 1), 'BRIDGING_IN');
      assert.equal(view(shownAt * 1000), 'COMPLETED');
    }
  });

  test('a funded route’s end shows its delay after the hold after its funding: within the hold, the moment follows the funding', () => {
    // Funded at 95 (BRIDGING_IN), hold 400 s, delay 10 s, epochs of 100 s: ends at 290 or 350 show at 600 (505 → 600) alike.
    for (const endedAt of [290, 350]) {
      const ended = [
        { status: 'AWAITING_DEPOSIT', reachedAt: at(0) },
        { status: 'BRIDGING_IN', reachedAt: at(95) },
        { status: 'COMPLETED', reachedAt: at(endedAt) },
      ];
      const view = (s: number) => publicStatusAt(ended, { now: s * 1000, epochSeconds: 100, delayMs: 10_000, holdMs: 400_000 });
      assert.equal(view(599).status, 'BRIDGING_IN', `ended ${endedAt}: not before the hold and the delay`);
      assert.deepEqual([view(600).status, view(600).since?.getTime()], ['COMPLETED', 600_000]);
    }
    // A route slower than the hold: its own delay after the end, as before.
    assert.equal(publicEndShownAt(700_000, { epochSeconds: 100, delayMs: 50_000, holdMs: 400_000, fundedAt: 95_000 }), 800_000);
    // Never funded (expired): no hold.
    assert.equal(publicEndShownAt(30_000, { epochSeconds: 100, delayMs: 0, holdMs: 400_000, fundedAt: null }), 100_000);
  });

  test('each route has its own end delay, within the maximum, that only the service can draw', () => {
    const delays = Array.from({ length: 200 }, (_, i) => publicEndDelayMs({ routeId: `rt_${i}`, statusTokenHash: `hash-${i}` }, 3_600_000));
    assert.ok(delays.every((d) => d >= 0 && d < 3_600_000));
    assert.ok(new Set(delays).size > 190, 'spread, not one value');
    assert.equal(
      publicEndDelayMs({ routeId: 'rt_x', statusTokenHash: 'h' }, 3_600_000),
      publicEndDelayMs({ routeId: 'rt_y', statusTokenHash: 'h' }, 3_600_000),
    );
    assert.equal(publicEndDelayMs({ routeId: 'rt_x', statusTokenHash: 'h' }, 0), 0);
  });
});
