#!/usr/bin/env node
// routectl from a checkout runs the TypeScript sources through tsx (a development dependency), so `npx routectl` works
// without a build step; where tsx is not installed (a production install: npm ci --omit=dev, then npm run build on a
// build machine) it runs the build in dist/. `routectl devnet …` (the local stack's commands) lives in devnet/ and needs
// the development install: production code never imports it.
const tsx = await import('tsx/esm/api').catch(() => null);

if (tsx) {
  tsx.register();
  if (process.argv[2] === 'devnet') {
    const { main } = await import('../devnet/cli.ts');
    main(process.argv.slice(3));
  } else {
    await import('../src/cli/routectl.ts');
  }
} else if (process.argv[2] === 'devnet') {
  process.stderr.write('routectl devnet needs the development install (npm ci): it drives the local stack\n');
  process.exitCode = 2;
} else {
  await import('../dist/src/cli/routectl.js').catch((error) => {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND') throw error;
    process.stderr.write('routectl: no build found (dist/src/cli/routectl.js); run npm run build\n');
    process.exitCode = 2;
  });
}
