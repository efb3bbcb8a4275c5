/**
 * How long price epochs last (issue 33, docs/privacy.md "Price epochs"): the service's own rule (src/quote/priceEpochs.ts:
 * decideEpoch, newEpoch) on a virtual clock, against a price that walks as ETH does (geometric Brownian motion at an
 * annualised volatility, one step a second), quoted every --quote-every seconds, for --hours hours per run. Prints per
 * rule and volatility: epochs an hour (a payout's creation is dated to its epoch: fewer is better), the share of clock
 * epochs that end early, how long epochs last (median, 10th percentile), where early ends fall (on an exit epoch start
 * or not), and the service's exposure (the largest gap between the held and the live price at a quote, in bps; the
 * margin must cover it with room for the moves until the bridge-out).
 *
 *   npm run bench:price-epochs -- [--vol 0.5,0.8,1.2] [--hours 1] [--runs 200] [--quote-every 15] [--json]
 */
import { parseArgs } from 'node:util';
import { quantile } from '../support/figures.ts';
import { decideEpoch, type HeldPrice, holdBands, newEpoch, type PriceEpochSettings } from '../../src/quote/priceEpochs.ts';

const { values } = parseArgs({
  options: {
    vol: { type: 'string', default: '0.5,0.8,1.2' },
    hours: { type: 'string', default: '1' },
    runs: { type: 'string', default: '200' },
    'quote-every': { type: 'string', default: '15' },
    json: { type: 'boolean', default: false },
  },
});
const vols = String(values.vol).split(',').map(Number);
const hours = Number(values.hours);
const runs = Number(values.runs);
const quoteEvery = Number(values['quote-every']);

/** The rules compared: before issue 33 (a check at every quote), and the band checked at exit epoch starts. */
const RULES: Array<{ name: string; settings: PriceEpochSettings }> = [
  { name: 'before: hold 25 at every quote, margin 50', settings: { epochSeconds: 3600, marginBps: 50 } },
  { name: 'hold 25 at exit epochs (600 s), margin 50', settings: { epochSeconds: 3600, marginBps: 50, holdBps: 25, alignSeconds: 600 } },
  { name: 'hold 50 at exit epochs (600 s), margin 100', settings: { epochSeconds: 3600, marginBps: 100, holdBps: 50, alignSeconds: 600 } },
  { name: 'hold 100 at exit epochs (600 s), margin 150', settings: { epochSeconds: 3600, marginBps: 150, holdBps: 100, alignSeconds: 600 } },
];

const SECONDS_A_YEAR = 365.25 * 24 * 3600;

/** A standard normal draw (Box–Muller). */
function normal(): number {
  const u = 1 - Math.random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * Math.random());
}

interface Figures {
  epochsPerHour: number;
  earlyShare: number;
  lengthMedianMin: number;
  lengthP10Min: number;
  earlyOnExitEpoch: number;
  /** Early ends past the hard stop; null for a rule that checks its band at every quote (it has no other). */
  hardStops: number | null;
  maxGapBps: number;
  p99GapBps: number;
}

function simulate(settings: PriceEpochSettings, vol: number): Figures {
  const sigma = vol / Math.sqrt(SECONDS_A_YEAR);
  const start = Date.UTC(2026, 10, 28, 0, 0, 0);
  const lengths: number[] = [];
  const gaps: number[] = [];
  let epochs = 0;
  let early = 0;
  let clockEpochs = 0;
  let onExit = 0;
  let hardStops = 0;
  const { hardStopBps } = holdBands(settings);
  for (let run = 0; run < runs; run++) {
    let logPrice = Math.log(3000);
    let held: HeldPrice | null = null;
    for (let t = 0; t < hours * 3600; t++) {
      logPrice += sigma * normal() - (sigma * sigma) / 2;
      if (t % quoteEvery !== 0) continue;
      const now = new Date(start + t * 1000);
      const live = Math.exp(logPrice).toFixed(6);
      const decided = decideEpoch(held, live, now, settings);
      if (decided.action === 'start') {
        if (held && held.endsAt > now) {
          early++;
          const gap = Math.abs(Number(live) / Number(held.usdPrice) - 1) * 10_000;
          if (gap > hardStopBps) hardStops++;
          else if (settings.alignSeconds && (now.getTime() / 1000) % settings.alignSeconds < quoteEvery) onExit++;
          lengths.push((now.getTime() - held.startedAt.getTime()) / 60_000);
        } else if (held) {
          lengths.push((held.endsAt.getTime() - held.startedAt.getTime()) / 60_000);
          clockEpochs++;
        }
        held = newEpoch(live, now, settings);
        epochs++;
      } else held = decided.held;
      gaps.push(Math.abs(Number(live) / Number(held.usdPrice) - 1) * 10_000);
    }
    if (held) clockEpochs++;
  }
  return {
    epochsPerHour: epochs / (runs * hours),
    earlyShare: early / (early + clockEpochs),
    lengthMedianMin: quantile(lengths, 0.5),
    lengthP10Min: quantile(lengths, 0.1),
    earlyOnExitEpoch: early ? onExit / early : 0,
    hardStops: settings.alignSeconds ? hardStops : null,
    maxGapBps: gaps.reduce((a, b) => Math.max(a, b), 0),
    p99GapBps: quantile(gaps, 0.99),
  };
}

const settings = (name: string) => RULES.find((r) => r.name === name)!.settings;
const rows: Array<{ rule: string; vol: number; figures: Figures }> = [];
for (const rule of RULES) for (const vol of vols) rows.push({ rule: rule.name, vol, figures: simulate(rule.settings, vol) });

if (values.json) process.stdout.write(`${JSON.stringify({ hours, runs, quoteEvery, rows }, null, 2)}\n`);
else {
  const pad = (x: string | number, n: number) => String(x).padEnd(n);
  const lines = [
    `price epochs: ${runs} runs of ${hours} h, a price step a second, a quote every ${quoteEvery} s; clock epochs of 3600 s`,
    `${pad('rule', 46)} ${pad('vol/yr', 7)} ${pad('epochs/h', 9)} ${pad('ended early', 12)} ${pad('length med/p10 min', 19)} ${pad('early on exit ep.', 18)} ${pad('hard stops', 11)} gap held↔live p99/max bps`,
    ...rows.map(
      ({ rule, vol, figures: f }) =>
        `${pad(rule, 46)} ${pad(`${Math.round(vol * 100)} %`, 7)} ${pad(f.epochsPerHour.toFixed(2), 9)} ${pad(`${Math.round(f.earlyShare * 100)} %`, 12)} ${pad(`${f.lengthMedianMin.toFixed(1)} / ${f.lengthP10Min.toFixed(1)}`, 19)} ${pad(settings(rule).alignSeconds ? `${Math.round(f.earlyOnExitEpoch * 100)} %` : 'n/a', 18)} ${pad(f.hardStops ?? 'n/a', 11)} ${f.p99GapBps.toFixed(1)} / ${f.maxGapBps.toFixed(1)}`,
    ),
    '(length: of epochs that ended, early or at the clock; early on exit ep.: early ends at the first quote of an exit epoch, the others are hard stops)',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
