/**
 * deploy/prometheus/alerts.yml and deploy/grafana/private-route.json cannot drift from the code: every metric an alert
 * or a panel names is one the service's registries define (built here as the API and the worker build them), and every
 * rule has what Prometheus and the on-call need (an expression, a severity, a summary).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Histogram, Registry } from 'prom-client';
import { parse } from 'yaml';
import type { Database } from '../../src/db/client.ts';
import { registerHotWalletGauges } from '../../src/observability/hotWallets.ts';
import { apiHttpRegistry } from '../../src/observability/httpMetrics.ts';
import { processRegistry, transferMetricsRegistry } from '../../src/observability/metrics.ts';
import { registerPipelineGauges } from '../../src/observability/pipelineMetrics.ts';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');

/** The series names /metrics of the API and the worker can show (a histogram's as _bucket, _sum and _count too). */
function knownSeries(): Set<string> {
  // Nothing is read at registration: the database and the chains are only asked when the gauges are collected.
  const db = {} as Database;
  const worker = new Registry();
  registerHotWalletGauges(worker, {
    db,
    chains: {} as never,
    settings: { mode: 'relay', hubChainId: 1, chainIds: [1], addresses: { gas: '0x0', pool_relayer: '0x0' } as never },
  });
  registerPipelineGauges(worker, { db });
  const names = new Set<string>();
  for (const registry of [processRegistry, transferMetricsRegistry(db), apiHttpRegistry, worker]) {
    for (const metric of registry.getMetricsAsArray()) {
      names.add(metric.name);
      if (metric instanceof Histogram) {
        for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${metric.name}${suffix}`);
      }
    }
  }
  return names;
}

/** The metric names in a PromQL expression: our metrics all start with private_route_ (labels and functions never do). */
const metricsIn = (expr: string) => [...expr.matchAll(/\bprivate_route_[a-z0-9_]+\b/g)].map((m) => m[0]);

interface Rule {
  alert?: string;
  expr?: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

test('every alert rule is complete and names only metrics the code defines', { timeout: 30_000 }, () => {
  const known = knownSeries();
  const file = parse(read('deploy/prometheus/alerts.yml')) as { groups: Array<{ name: string; rules: Rule[] }> };
  assert.ok(Array.isArray(file.groups) && file.groups.length > 0, 'alerts.yml has groups');
  const names = new Set<string>();
  const referenced = new Set<string>();
  for (const group of file.groups) {
    assert.ok(group.name && Array.isArray(group.rules) && group.rules.length > 0, `group ${group.name} has rules`);
    for (const rule of group.rules) {
      assert.match(rule.alert ?? '', /^PrivateRoute[A-Za-z0-9]+$/, 'an alert name');
      assert.ok(!names.has(rule.alert!), `${rule.alert} is defined once`);
      names.add(rule.alert!);
      assert.ok(rule.expr?.trim(), `${rule.alert} has an expression`);
      if (rule.for !== undefined) assert.match(rule.for, /^\d+[smhd]$/, `${rule.alert}: for is a duration`);
      assert.ok(['page', 'ticket'].includes(rule.labels?.severity ?? ''), `${rule.alert}: severity page or ticket`);
      assert.ok(rule.annotations?.summary, `${rule.alert} has a summary`);
      const metrics = metricsIn(rule.expr!);
      assert.ok(metrics.length > 0, `${rule.alert} names a metric`);
      for (const metric of metrics) {
        assert.ok(known.has(metric), `${rule.alert} names ${metric}, which no registry of the service defines`);
        referenced.add(metric);
      }
    }
  }
  // What the brief asks to be alerted on.
  for (const metric of [
    'private_route_hot_wallet_oldest_pending_seconds',
    'private_route_deposit_watch_lag_seconds',
    'private_route_withdrawals_due',
    'private_route_asp_approval_oldest_wait_seconds',
    'private_route_webhook_deliveries_failed_24h',
    'private_route_http_requests_total',
  ]) {
    assert.ok(referenced.has(metric), `an alert watches ${metric}`);
  }
});

test('every Grafana panel queries only metrics the code defines', { timeout: 30_000 }, () => {
  const known = knownSeries();
  const dashboard = JSON.parse(read('deploy/grafana/private-route.json')) as { panels: Array<{ title: string; targets: Array<{ expr: string }> }> };
  assert.ok(dashboard.panels.length > 0);
  for (const panel of dashboard.panels) {
    for (const target of panel.targets) {
      const metrics = metricsIn(target.expr);
      assert.ok(metrics.length > 0, `${panel.title} queries a metric`);
      for (const metric of metrics) assert.ok(known.has(metric), `panel "${panel.title}" queries ${metric}, which no registry defines`);
    }
  }
});

test('a metric no registry defines is caught', () => {
  assert.ok(!knownSeries().has('private_route_not_a_metric'));
  assert.deepEqual(metricsIn('max by (chain_id) (private_route_a{le="1"}) > 0'), ['private_route_a']);
});
