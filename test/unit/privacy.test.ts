import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { amountClassKey, amountClassOf, isAmountClass, nextAmountClass, previousAmountClass, roundingBps } from '../../src/privacy/amountClass.ts';
import { simulate } from '../../bench/exits/simulate.ts';
import {
  anonymitySetMembers,
  anonymitySetSize,
  countAnonymitySet,
  clientIdentities,
  type PoolNoteFacts,
  type PoolStateView,
  unsettledMembers,
} from '../../src/privacy/anonymitySet.ts';
import { nextEpochStart } from '../../src/privacy/exitEpochs.ts';
import { publicDelayMs, publicEndShownAt, publicLateEndDelayMs, publicProgressShownAt, publicStatusAt } from '../../src/transfers/publicView.ts';
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
    gatedAt: 0,
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

  test('candidates in an exit epoch: only notes gated by it', () => {
    const own = note('own');
    // A withdrawal in the exit epoch starting at 10 000 ms.
    const cases: Array<[string, Partial<PoolNoteFacts>, boolean]> = [
      ['gated for this very epoch (its gate opened in the one before)', { gatedAt: 10_000 }, true],
      ['gated long ago and still in the pool: as likely as any (the lottery forgets waits)', { gatedAt: 1_000 }, true],
      ['gated for the next epoch', { gatedAt: 13_000 }, false],
      ['approved but waiting at its gate (a larger minimum of its own, or too young)', { gatedAt: null }, false],
    ];
    for (const [what, over, expected] of cases) {
      assert.deepEqual(
        anonymitySetMembers(own, [own, note('a', over)], everything, 0n, 10_000).map((m) => m.routeId),
        expected ? ['a'] : [],
        what,
      );
    }
    assert.deepEqual(
      anonymitySetMembers(own, [own, note('a', { gatedAt: null })], everything).map((m) => m.routeId),
      ['a'],
      'without an exit epoch (routes from before them) gates do not count',
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

  test('exit epochs follow the clock', () => {
    const table: Array<[number, number, number]> = [
      [0, 1800, 1_800_000],
      [1, 1800, 1_800_000],
      [1_799_999, 1800, 1_800_000],
      [1_800_000, 1800, 3_600_000],
      [7_000, 3, 9_000],
    ];
    for (const [now, seconds, expected] of table) assert.equal(nextEpochStart(now, seconds), expected, `${now} ms, epochs of ${seconds} s`);
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

  test('a partner that vouches for its users: they count as distinct clients, filling at most its share of a set', () => {
    const wallet = { tag: 'wallet', shareBps: 5_000 };
    const setOf = (own: string, peers: string[], vouched: string[], voucher = wallet) =>
      anonymitySetSize({ own, candidates: peers, clientOf: (id) => id, voucherOf: (id) => (vouched.includes(id) ? voucher : null) });
    const users = ['u1', 'u2', 'u3', 'u4'];
    const table: Array<[string, number, number]> = [
      ['a victim among four of the wallet’s users and nobody else: half of a set at most is theirs', 2, setOf('victim', users, users)],
      [
        'the same users without a voucher (distinct clients all): any one of them may be the observer',
        4,
        anonymitySetSize({ own: 'victim', candidates: users, clientOf: (id) => id }),
      ],
      ['a partner trusted with the whole set', 4, setOf('victim', users, users, { tag: 'wallet', shareBps: 10_000 })],
      ['with three other users beside them the wallet’s four are half of eight: nothing to cap', 7, setOf('victim', [...users, 'a', 'b', 'c'], users)],
      ['with one other user beside them, the wallet’s four would be four of six: capped at twice the two', 4, setOf('victim', [...users, 'a'], users)],
      ['one of the wallet’s own users, its three other users and one other: capped at twice the two', 4, setOf('u1', ['u2', 'u3', 'u4', 'a'], users)],
    ];
    for (const [what, expected, got] of table) assert.equal(got, expected, what);
  });

  test('candidate sets that do not nest are counted over their matchings, not by the closed form', () => {
    // Three withdrawals that could take any of a, b, c, then one that could take c or d (a withdrawal counted from a
    // narrower rule, as longest-wait exits were): c is taken by then, so d is the fourth's, and a, b, c are the first
    // three's in any order. The closed form for nested sets finds "more withdrawals than notes" for the fourth and
    // reported 1 for every route of the class: the collapse of issue 32.
    const w = (routeId: string, candidates: string[]) => ({ routeId, candidates });
    const chain = [w('a', ['a', 'b', 'c']), w('b', ['a', 'b', 'c']), w('c', ['a', 'b', 'c']), w('d', ['c', 'd'])];
    const clientOf = (id: string) => id;
    assert.equal(size('a', ['b', 'c'], [], chain.slice(1)), 2, 'hidden among a, b, c (2 once any one of them is the observer)');
    assert.equal(size('b', ['a', 'c'], chain.slice(0, 1), chain.slice(2)), 2);
    assert.equal(size('d', ['c'], chain.slice(0, 3)), 1, 'the fourth is linked: it could only have taken d');
    for (const [at, own] of chain.entries()) {
      assert.equal(
        size(
          own.routeId,
          own.candidates.filter((id) => id !== own.routeId),
          chain.slice(0, at),
          chain.slice(at + 1),
        ),
        bruteForce(own.routeId, chain, at, clientOf),
        own.routeId,
      );
    }
  });

  test('any candidate sets: the size is the exact odds of a uniform matching (brute force)', () => {
    const ids = ['a', 'b', 'c', 'd', 'e', 'f'];
    const candidateSet = fc.subarray(ids, { minLength: 1 });
    fc.assert(
      fc.property(
        fc.array(candidateSet, { minLength: 1, maxLength: 5 }),
        fc.nat(),
        fc.array(fc.nat({ max: 2 }), { minLength: 6, maxLength: 6 }),
        (sets, pick, clientPicks) => {
          // Each withdrawal spends a note of its own candidates: the route of withdrawal i is the i-th id, always a candidate.
          const chain = sets.map((set, i) => ({ routeId: ids[i]!, candidates: [...new Set([ids[i]!, ...set])] }));
          const at = pick % chain.length;
          const own = chain[at]!.routeId;
          const clients = Object.fromEntries(ids.map((id, i) => [id, `client${clientPicks[i]}`]));
          const clientOf = (id: string) => (id === own ? 'own' : clients[id]!);
          const counted = countAnonymitySet({
            own,
            candidates: chain[at]!.candidates.filter((id) => id !== own),
            withdrawals: { before: chain.slice(0, at), after: chain.slice(at + 1) },
            clientOf,
          });
          const exact = bruteForce(own, chain, at, clientOf);
          assert.ok(counted.size <= exact, `reported ${counted.size} > exact ${exact}: ${JSON.stringify(chain)}, ours ${own}`);
          if (counted.method === 'nested' || counted.method === 'counted') assert.equal(counted.size, exact, JSON.stringify(chain));
        },
      ),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 500) },
    );
  });

  test('the service’s own histories (gates, the exit lottery, waiters, value filters, shared clients): no report exceeds the exact odds', () => {
    const rules = {
      epochSeconds: 3,
      meanMinSeconds: 6,
      meanMaxSeconds: 15,
      flushSeconds: 45,
      trafficWindowSeconds: 120,
      maxWaitSeconds: 24,
      minPeerAgeSeconds: 0,
      pollSeconds: 1,
      reviewSeconds: 1,
      proofSeconds: 1,
    };
    const arrival = fc.record({
      gap: fc.integer({ min: 0, max: 6_000 }),
      client: fc.integer({ min: 0, max: 5 }),
      minimum: fc.constantFrom(1, 2, 3, 3, 5, 50),
      value: fc.constantFrom(100n, 100n, 100n, 98n),
    });
    fc.assert(
      fc.property(fc.array(arrival, { minLength: 1, maxLength: 8 }), fc.integer({ min: 96, max: 100 }), (list, priced) => {
        let at = 1_800_000_000_000;
        const arrivals = list.map((a) => ({ at: (at += a.gap), client: `c${a.client}`, minimum: a.minimum, value: a.value }));
        // The withdrawal's amount moves with the bridge's price: early withdrawals take 96–100, later ones 99.
        const result = simulate(rules, arrivals, { withdrawalAmount: (now) => (now - arrivals[0]!.at < 20_000 ? BigInt(priced) : 99n) });
        const chain = result.withdrawals.map((w) => ({ routeId: w.routeId, candidates: w.candidates }));
        const clientOf = (id: string) => result.routes.find((r) => r.routeId === id)!.client;
        for (const w of result.withdrawals) {
          for (const id of w.candidates) {
            const gatedAt = result.routes.find((r) => r.routeId === id)!.gatedAt;
            assert.ok(gatedAt !== null && gatedAt <= w.epochAt, `${id} counted by ${w.routeId} before its gate opened`);
          }
        }
        for (const route of result.routes) {
          assert.ok(route.withdrawnAt !== null, `${route.routeId} never left`);
          const at = chain.findIndex((w) => w.routeId === route.routeId);
          const exact = bruteForce(route.routeId, chain, at, clientOf);
          const label = `${route.routeId} reported ${route.reported} (${route.method}), exact ${exact}; ${JSON.stringify(chain)}`;
          assert.ok(route.reported! <= exact, label);
          if (route.method === 'nested' || route.method === 'counted') assert.equal(route.reported, exact, label);
        }
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 150) },
    );
  });

  test('waiters are nobody’s peers: three routes that wait for a set of 50 are never counted in a victim’s', () => {
    const rules = {
      epochSeconds: 3,
      meanMinSeconds: 6,
      meanMaxSeconds: 15,
      flushSeconds: 45,
      trafficWindowSeconds: 120,
      maxWaitSeconds: 120,
      minPeerAgeSeconds: 0,
      pollSeconds: 1,
      reviewSeconds: 1,
      proofSeconds: 1,
    };
    const t0 = 1_800_000_000_000;
    // Waiters are approved and wait at their gates all the while the victim is in the pool. (One that waited its own
    // longest leaves whatever its set, and is a peer like any other from then on: here that comes after the victim left.)
    const waitersAt = (from: number) => [0, 500, 1_000].map((ms, i) => ({ at: from + ms, client: `waiter${i}`, minimum: 50 }));
    // The victim alone waits its longest (120 s) and then leaves within a flush (45 s); the waiters enter at 100 s.
    const alone = simulate(rules, [{ at: t0, client: 'victim', minimum: 3 }, ...waitersAt(t0 + 100_000)]);
    const victim = alone.routes.find((r) => r.client === 'victim')!;
    assert.equal(victim.gate, 'max-wait', 'with only waiters beside it, the victim’s set never reaches 3');
    assert.equal(victim.reported, 1, 'and it reports nobody');
    assert.deepEqual(alone.withdrawals.find((w) => w.routeId === victim.routeId)!.candidates, [victim.routeId]);

    const users = [0, 500, 1_000, 1_500].map((ms, i) => ({ at: t0 + ms, client: `user${i}`, minimum: 3 }));
    const withPeers = simulate(rules, [...users, ...waitersAt(t0 + 2_000)]);
    const waiterIds = new Set(withPeers.routes.filter((r) => r.minimum === 50).map((r) => r.routeId));
    for (const route of withPeers.routes.filter((r) => r.minimum === 3)) {
      assert.equal(route.gate, 'set-reached');
      assert.equal(route.reported, 3, `${route.routeId} hides among the four users (3 once any one is the observer), not the waiters`);
      const own = withPeers.withdrawals.find((w) => w.routeId === route.routeId)!;
      assert.deepEqual(
        own.candidates.filter((id) => waiterIds.has(id)),
        [],
        'no waiter among its candidates',
      );
    }
  });

  test('sixteen distinct users of one class who ask for 3 all reach it, and none collapses to 1', () => {
    const rules = {
      epochSeconds: 3,
      meanMinSeconds: 9,
      meanMaxSeconds: 45,
      flushSeconds: 180,
      trafficWindowSeconds: 432,
      maxWaitSeconds: 90,
      minPeerAgeSeconds: 0,
      pollSeconds: 1,
      reviewSeconds: 1,
      proofSeconds: 2,
    };
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1_500 }), { minLength: 16, maxLength: 16 }), (gaps) => {
        let at = 1_800_000_000_000;
        const result = simulate(
          rules,
          gaps.map((gap, i) => ({ at: (at += gap), client: `user${i}`, minimum: 3 })),
        );
        const sets = result.routes.map((r) => r.reported!);
        assert.ok(result.routes.filter((r) => r.reported! >= 3).length >= 15, `sets ${sets.join(' ')}`);
        assert.ok(
          sets.every((n) => n > 1),
          `sets ${sets.join(' ')}`,
        );
      }),
      { numRuns: 10 },
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
    // Epochs of 100 s, no hold; the route's delay 150 s: BRIDGING_IN shows 150 s after the funding, the end 150 s after it.
    const cases: Array<[number, string, number]> = [
      [50, 'AWAITING_DEPOSIT', 0],
      [299, 'AWAITING_DEPOSIT', 0],
      [300, 'BRIDGING_IN', 1], // funded at 95: shown once the epoch after 245 began
      [260 + 100, 'BRIDGING_IN', 1], // shielded and withdrawn meanwhile: never shown
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

  test('each route has its own delays, within the maximum, that only the service can draw', () => {
    const routes = Array.from({ length: 200 }, (_, i) => ({ statusTokenHash: `hash-${i}` }));
    for (const delayOf of [publicDelayMs, publicLateEndDelayMs]) {
      const delays = routes.map((route) => delayOf(route, 3_600_000));
      assert.ok(delays.every((d) => d >= 0 && d < 3_600_000));
      assert.ok(new Set(delays).size > 190, 'spread, not one value');
      assert.equal(delayOf({ statusTokenHash: 'h' }, 0), 0);
      // Nothing a routeId holder knows goes in: a row without a hash (none after migration 0023) waits the longest.
      assert.equal(delayOf({ statusTokenHash: null }, 3_600_000), 3_600_000);
    }
    // Two draws: the late end's delay is not the other one.
    const gaps = routes.map((route) => publicDelayMs(route, 3_600_000) - publicLateEndDelayMs(route, 3_600_000));
    assert.ok(new Set(gaps).size > 190);
  });

  test('BRIDGING_IN shows the route’s own delay after the funding: the view does not date the deposit, and its end adds nothing', () => {
    // Funded at 95, epochs of 100 s, hold 400 s: with no delay BRIDGING_IN shows at 100 (the funding's epoch, as before
    // issue 33); with a delay of 230 s at 400 (325 → 400): a funding anywhere in (70, 170] shows then.
    const funded = [
      { status: 'AWAITING_DEPOSIT', reachedAt: at(0) },
      { status: 'BRIDGING_IN', reachedAt: at(95) },
      { status: 'RECEIVED_ON_HUB', reachedAt: at(130) },
    ];
    const clock = (delayMs: number) => ({ epochSeconds: 100, delayMs, lateDelayMs: 999_000, holdMs: 400_000 });
    const view = (s: number, delayMs: number, history = funded) => publicStatusAt(history, { now: s * 1000, ...clock(delayMs) });
    assert.deepEqual([view(100, 0).status, view(100, 0).since?.getTime()], ['BRIDGING_IN', 100_000]);
    assert.equal(view(399, 230_000).status, 'AWAITING_DEPOSIT');
    assert.deepEqual([view(400, 230_000).status, view(400, 230_000).seq, view(400, 230_000).since?.getTime()], ['BRIDGING_IN', 1, 400_000]);
    assert.equal(publicProgressShownAt(70_000, { epochSeconds: 100, delayMs: 230_000 }), 300_000);
    // Ended within the hold: the end shows the hold after BRIDGING_IN did (725 → 800), whenever it ended.
    for (const endedAt of [200, 480]) {
      const ended = [...funded, { status: 'COMPLETED', reachedAt: at(endedAt) }];
      assert.equal(view(799, 230_000, ended).status, 'BRIDGING_IN', `ended ${endedAt}`);
      assert.equal(view(800, 230_000, ended).status, 'COMPLETED', `ended ${endedAt}`);
    }
    // Ended past the hold (at 600): its own late delay after the end, not the delay BRIDGING_IN showed with, so the gap
    // between the two moments is not the route's duration.
    assert.equal(publicEndShownAt(600_000, { ...clock(230_000), fundedAt: 95_000 }), 1_600_000);
    // ...but never sooner than the hold after BRIDGING_IN (800): an end shown sooner would bound the funding from above.
    assert.equal(publicEndShownAt(600_000, { ...clock(230_000), lateDelayMs: 0, fundedAt: 95_000 }), 800_000);
    // Whatever the draws, a funded route's end never narrows the funding below what BRIDGING_IN tells: the funding is at
    // most the end's moment less the hold (slow routes end past it), and BRIDGING_IN's moment is already later than that.
    for (let i = 0; i < 2_000; i++) {
      const f = Math.floor(Math.random() * 1_000_000);
      const o = { epochSeconds: 100, delayMs: Math.floor(Math.random() * 600_000), lateDelayMs: Math.floor(Math.random() * 600_000), holdMs: 400_000 };
      const endedAt = f + Math.floor(Math.random() * 2_000_000);
      const b = publicProgressShownAt(f, o);
      const e = publicEndShownAt(endedAt, { ...o, fundedAt: f });
      assert.ok(e - o.holdMs >= b, `funded ${f}, ended ${endedAt}: the end at ${e}, BRIDGING_IN at ${b}`);
      if (endedAt <= f + o.holdMs) assert.equal(e, b + o.holdMs, 'within the hold: the hold after BRIDGING_IN, whatever the end');
    }
  });
});
