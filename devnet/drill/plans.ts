import type { DrillStep } from './types.ts';

/** The full drill's plan: every crash point in order of a transfer's life, Temporal restarted halfway and Postgres at three quarters. */
export function fullPlan(transfers: number, bridge: 'relay' | 'cctp'): DrillStep[] {
  const first = Math.ceil(transfers / 2);
  return [
    { kind: 'create', count: first },
    { kind: 'crash', point: 'before:bridgeIn' },
    { kind: 'crash', point: 'tx:signed' },
    { kind: 'crash', point: 'tx:broadcast' },
    { kind: 'crash', point: 'after:bridgeIn' },
    { kind: 'crash', point: 'after:awaitDelivery' },
    { kind: 'crash', point: 'before:shield' },
    { kind: 'crash', point: 'tx:signed' },
    { kind: 'crash', point: 'tx:broadcast' },
    { kind: 'crash', point: 'after:shield' },
    { kind: 'restart', server: 'temporal' },
    ...(transfers > first ? [{ kind: 'create', count: transfers - first } as const] : []),
    { kind: 'crash', point: 'before:privacyStatus' },
    { kind: 'crash', point: 'tx:signed' },
    { kind: 'crash', point: 'tx:broadcast' },
    { kind: 'crash', point: 'after:privacyStatus' },
    { kind: 'crash', point: 'before:unshield' },
    { kind: 'crash', point: 'tx:signed' },
    { kind: 'crash', point: 'after:unshield' },
    { kind: 'restart', server: 'postgres' },
    ...(bridge === 'cctp'
      ? ([
          { kind: 'crash', point: 'before:bridgeOut' },
          { kind: 'crash', point: 'tx:broadcast' },
          { kind: 'crash', point: 'after:bridgeOut' },
        ] as const)
      : []),
    { kind: 'crash', point: 'before:awaitDelivery' },
    { kind: 'crash', point: 'after:awaitDelivery' },
  ];
}

/** The short form the test suite runs: two transfers, four interruptions. */
export function shortPlan(): DrillStep[] {
  return [
    { kind: 'create', count: 2 },
    { kind: 'crash', point: 'tx:signed' },
    { kind: 'crash', point: 'tx:broadcast' },
    { kind: 'crash', point: 'after:unshield' },
    { kind: 'restart', server: 'temporal' },
  ];
}
