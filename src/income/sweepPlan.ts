/**
 * Which change notes an income sweep collects, and how much of each: a pure function of the notes and the settings.
 *
 * Why these rules (docs/privacy.md, "Collecting the income"): a change note holds its route's note value less its
 * withdrawal, both public, so its exact value names its deposit; taken whole, soon after, one route at a time, it
 * would also say when that route's withdrawal happened. So a sweep takes
 * - only notes older than `minAgeSeconds` (days: every withdrawal of their time is long past),
 * - an amount from a fixed 1-2-5 grid, the largest at most the note's value (the rest stays, as a new change note),
 *   so an amount names only "some note held at least this", and many notes share each amount,
 * - only when at least `minBatch` notes of `minBatch` different routes are due together, all of them at once.
 */

export interface ChangeNoteFacts {
  routeId: string;
  generation: number;
  asset: string;
  /** In the asset's smallest units. */
  value: bigint;
  /** Unix seconds of the withdrawal that left it. */
  leftAt: number;
}

export interface SweepSettings {
  /** The grid's smallest step in the asset's smallest units (e.g. 10_000 = 0.01 USDC): amounts are 1, 2 or 5 × 10^k of it. */
  gridUnit: bigint;
  /** Amounts below this are left in the pool (a withdrawal's gas would cost more than they bring). */
  minAmount: bigint;
  minAgeSeconds: number;
  minBatch: number;
}

export interface PlannedSweep {
  routeId: string;
  generation: number;
  asset: string;
  /** The note's whole value (what the proof spends). */
  noteValue: bigint;
  /** What the sweep withdraws (gross): a grid amount. */
  amount: bigint;
}

export type SweepPlan = { sweeps: PlannedSweep[]; reason: 'batch' } | { sweeps: []; reason: 'nothing-due' | 'batch-too-small'; due: number };

/** The largest amount of the 1-2-5 grid (multiples of `unit`) at most `value`; 0 when `value` is below one unit. */
export function gridAmountAtMost(value: bigint, unit: bigint): bigint {
  if (unit <= 0n) throw new RangeError('the grid unit must be positive');
  let best = 0n;
  for (let decade = unit; decade <= value; decade *= 10n) {
    for (const step of [1n, 2n, 5n]) if (decade * step <= value) best = decade * step;
  }
  return best;
}

export function planSweep(notes: readonly ChangeNoteFacts[], nowSeconds: number, settings: SweepSettings): SweepPlan {
  if (settings.minBatch < 1) throw new RangeError('minBatch must be at least 1');
  const due = notes
    .filter((note) => nowSeconds - note.leftAt >= settings.minAgeSeconds)
    .map((note) => ({ note, amount: gridAmountAtMost(note.value, settings.gridUnit) }))
    .filter(({ amount }) => amount > 0n && amount >= settings.minAmount);
  if (due.length === 0) return { sweeps: [], reason: 'nothing-due', due: 0 };
  const routes = new Set(due.map(({ note }) => note.routeId));
  if (routes.size < settings.minBatch) return { sweeps: [], reason: 'batch-too-small', due: due.length };
  return {
    reason: 'batch',
    sweeps: due.map(({ note, amount }) => ({ routeId: note.routeId, generation: note.generation, asset: note.asset, noteValue: note.value, amount })),
  };
}
