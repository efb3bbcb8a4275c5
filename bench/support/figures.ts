/** Small helpers for the benchmarks' figures and options. */

export function round(x: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** The q-quantile (0–1) of the values, nearest rank; NaN for none. */
export function quantile(values: number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export const median = (values: number[]) => quantile(values, 0.5);
export const mean = (values: number[]) => (values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length);
export const max = (values: number[]) => (values.length === 0 ? Number.NaN : Math.max(...values));

/** A positive integer option, or exit 2 saying which flag is wrong. */
export function positiveInt(text: string | undefined, flag: string, { allowZero = false } = {}): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < (allowZero ? 0 : 1)) {
    console.error(`${flag} must be a ${allowZero ? 'non-negative' : 'positive'} integer (got ${text})`);
    process.exit(2);
  }
  return value;
}

/** Runs a benchmark's main: any error is printed and exits 1 (the run broke; slow figures are not errors). */
export function runMain(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}

/** Left-aligned table rows for stdout. */
export function table(rows: Array<Array<string | number>>): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => String(r[i] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => String(cell).padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
