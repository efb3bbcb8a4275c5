import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { amountClassKey, amountClassOf, isAmountClass, nextAmountClass, previousAmountClass, roundingBps } from '../../src/privacy/amountClass.ts';
import { anonymitySetMembers, anonymitySetSize, type PoolNoteFacts, type PoolStateView, unsettledMembers } from '../../src/privacy/anonymitySet.ts';
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

  const member = (routeId: string, client: number) => ({ routeId, client });
  const others = (...ids: string[]) => ids.map((id, i) => member(id, i + 1));

  test('size: what the best guess of an observer leaves, either way', () => {
    // Any one client may be the observer (it knows its own routes), so a set counts what is left without the worst one.
    const all3 = (id: string) => ({ routeId: id, candidates: ['a', 'b', 'c'] });
    const before = (...withdrawals: Array<{ routeId: string; candidates: string[] }>) => ({ before: withdrawals, after: [] });
    const cases: Array<[string, number, Parameters<typeof anonymitySetSize>]> = [
      ['alone', 1, ['r', []]],
      ['three peers from three clients, nobody left yet: any one of them may be the observer', 3, ['r', others('a', 'b', 'c')]],
      ['the last of three that left together', 2, ['c', others('a', 'b'), before(all3('a'), all3('b'))]],
      ['the second of three that left together', 2, ['b', others('a', 'c'), { before: [all3('a')], after: [all3('c')] }]],
      ['the first of three that left together, once the others left too', 2, ['a', others('b', 'c'), { before: [], after: [all3('b'), all3('c')] }]],
      [
        'a peer left before the route deposited, and the other peer is the observer',
        1,
        ['r', others('a', 'b'), before({ routeId: 'a', candidates: ['a', 'b'] })],
      ],
      ['a peer left before the route deposited, among many clients', 3, ['r', others('a', 'b', 'c', 'd'), before({ routeId: 'a', candidates: ['a', 'b'] })]],
      [
        'an older proof mined later comes first: it could only take the early notes',
        1,
        ['r2', others('r0', 'r1'), before({ routeId: 'r1', candidates: ['r0', 'r1'] })],
      ],
      [
        'a later withdrawal that may have taken the route’s note',
        2,
        ['r', others('a', 'b'), { before: [], after: [{ routeId: 'a', candidates: ['a', 'b', 'r'] }] }],
      ],
      ['a settled withdrawal (it could take only its own note) changes nothing', 3, ['r', others('a', 'b', 'c'), before({ routeId: 'x', candidates: ['x'] })]],
      ['one client holds every peer: taking it away leaves the route alone', 1, ['r', [member('a', 1), member('b', 1), member('c', 1)]]],
      ['two of the three peers are the route’s own client’s', 2, ['r', [member('a', 0), member('b', 0), member('c', 1)]]],
      ['a ragequit peer no longer counts', 2, ['r', others('a', 'b', 'c'), before(), new Set(['c'])]],
    ];
    for (const [what, expected, args] of cases) assert.equal(anonymitySetSize(...args), expected, what);
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
    assert.deepEqual(
      unsettledMembers(others('x', 'y', 'a', 'b'), withdrawals).map((m) => m.routeId),
      ['a', 'b'],
    );
    assert.equal(anonymitySetSize('r', others('x', 'y', 'a', 'b'), withdrawals), anonymitySetSize('r', others('a', 'b'), withdrawals));
  });

  /**
   * Every matching of the class's withdrawals (ours at `oursAt`) to distinct candidates, counted: the observer's exact
   * odds by brute force, as ⌊1 / the largest chance⌋ that ours spent some note or that some withdrawal spent our note.
   */
  function bruteForce(own: string, chain: string[][], oursAt: number): number {
    let total = 0;
    const counts = new Map<string, number>();
    const bump = (key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);
    const walk = (i: number, used: Set<string>, picks: string[]) => {
      if (i === chain.length) {
        total++;
        bump(`ours:${picks[oursAt]}`);
        const j = picks.indexOf(own);
        if (j !== -1) bump(`took-own:${j}`);
        return;
      }
      for (const id of chain[i]!) if (!used.has(id)) walk(i + 1, new Set([...used, id]), [...picks, id]);
    };
    walk(0, new Set(), []);
    if (total === 0) return 1;
    return Math.max(1, Math.floor(total / Math.max(...counts.values())));
  }

  /** Whether some matching has withdrawal `oursAt` spend `own`. */
  function possible(own: string, chain: string[][], oursAt: number): boolean {
    const walk = (i: number, used: Set<string>): boolean =>
      i === chain.length || chain[i]!.some((id) => !used.has(id) && (i !== oursAt || id === own) && walk(i + 1, new Set([...used, id])));
    return walk(0, new Set());
  }

  test('with each withdrawal proved against the pool as it then was, the size never exceeds the observer’s exact odds (brute force)', () => {
    // A class's history: deposits and withdrawals in time; each withdrawal's candidates are the deposits before it.
    // The route's own withdrawal is one of them (or the next one); every client is distinct.
    const history = fc.array(fc.constantFrom('deposit', 'withdraw'), { minLength: 1, maxLength: 10 });
    fc.assert(
      fc.property(history, fc.nat(), fc.nat(), (events, pickNote, pickWithdrawal) => {
        const deposits: string[] = [];
        const chain: string[][] = [];
        let unspent = 0;
        for (const event of events) {
          if (event === 'deposit') {
            deposits.push(`d${deposits.length}`);
            unspent++;
          } else if (unspent > 0) {
            chain.push([...deposits]);
            unspent--;
          }
        }
        if (unspent === 0) chain.pop();
        if (deposits.length === 0) return;
        // Our withdrawal: one of the recorded ones, or one more at the end (it can spend anything deposited).
        const at = pickWithdrawal % (chain.length + 1);
        const oursCandidates = at === chain.length ? [...deposits] : chain[at]!;
        const own = oursCandidates[pickNote % oursCandidates.length]!;
        const withOurs = [...chain.slice(0, at), oursCandidates, ...chain.slice(at + 1)];
        const members = oursCandidates.filter((d) => d !== own).map((d, i) => member(d, i + 1));
        const named = (list: string[][], from: number) => list.map((candidates, i) => ({ routeId: `w${from + i}`, candidates }));
        const setSize = anonymitySetSize(own, members, { before: named(chain.slice(0, at), 0), after: named(chain.slice(at + 1), at + 1) });
        const exact = bruteForce(own, withOurs, at);
        // Only histories where our withdrawal can have spent our note happen.
        if (!possible(own, withOurs, at)) return;
        assert.ok(setSize <= exact, `reported ${setSize}, an observer leaves ${exact} (history ${events.join(' ')}, ours at ${at}, own ${own})`);
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 400) },
    );
  });
});

describe('privacy plan', () => {
  const settings = {
    delayMinSeconds: 10,
    delayMaxSeconds: 20,
    minAnonymitySet: 5,
    maxAnonymitySet: 50,
    maxWaitSeconds: 600,
    pollSeconds: 30,
    reviewTimeoutSeconds: 3600,
  };

  test('draws the delay inside the window and never lowers the service’s anonymity set', () => {
    const delays = new Set<number>();
    for (let i = 0; i < 200; i++) {
      const plan = drawPrivacyPlan(settings, i % 2 === 0 ? 2 : 8);
      assert.ok(plan.delaySeconds >= 10 && plan.delaySeconds <= 20);
      assert.equal(plan.minAnonymitySet, i % 2 === 0 ? 5 : 8);
      delays.add(plan.delaySeconds);
    }
    assert.ok(delays.size > 5, 'the delay is random');
  });

  test('refuses an anonymity set above the configured maximum', () => {
    assert.throws(() => drawPrivacyPlan(settings, 51), /minAnonymitySet must be at most 50/);
  });
});
