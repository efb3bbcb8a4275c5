/**
 * The dependency rules `npm run check:deps` enforces (dependency-cruiser; .ci/run runs it):
 * - no import cycles anywhere in the project;
 * - production code (src/, workflows/, activities/) imports no development code (devnet/, test/, bench/, scripts/);
 * - the layers (README.md, Layout): src/domain imports nothing outside src/domain; only boot code imports activities/,
 *   and workflows/ import activities' types only (proxyActivities), never their code.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A module reaches itself through its imports: move what both need into a module of its own.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'production-imports-no-development-code',
      severity: 'error',
      comment: 'Production code must not import the local stack, tests, benchmarks or scripts: move what it needs into src/.',
      from: { path: '^(src|workflows|activities)/' },
      to: { path: '^(devnet|test|bench|scripts)/' },
    },
    {
      name: 'domain-imports-only-domain',
      severity: 'error',
      comment:
        'src/domain is the transfer vocabulary: it imports nothing outside src/domain (no Temporal, API, database, viem or node: builtins). Move the dependent part out of the domain.',
      from: { path: '^src/domain/' },
      to: { pathNot: '^src/domain/' },
    },
    {
      name: 'only-boot-code-imports-activities',
      severity: 'error',
      comment:
        'Activities are wired in by the worker boot (src/temporal/worker.ts, src/runtime.ts, src/workerProcess.ts); tests, the local stack and benchmarks may import them. Anything else takes what it shares with them from src/domain.',
      from: { pathNot: '^(activities|workflows|test|devnet|bench)/|^src/(temporal/worker|runtime|workerProcess)[.]ts$' },
      to: { path: '^activities/' },
    },
    {
      name: 'workflows-import-activity-types-only',
      severity: 'error',
      comment: "Workflows take the activities' types for proxyActivities (`import type`); activity code in the workflow bundle would break determinism.",
      from: { path: '^workflows/' },
      to: { path: '^activities/', dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|dist-client|\\.data|\\.scratch)/' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.mjs', '.js', '.json'] },
  },
};
