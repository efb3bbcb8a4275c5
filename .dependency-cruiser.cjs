/**
 * The dependency rules `npm run check:deps` enforces (dependency-cruiser; .ci/run runs it):
 * - no import cycles anywhere in the project;
 * - production code (src/, workflows/, activities/) imports no development code (devnet/, test/, bench/, scripts/).
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
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist|dist-client|\\.data|\\.scratch)/' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.mjs', '.js', '.json'] },
  },
};
