/**
 * `npm run pack:client [-- --out <dir>]`: the TypeScript client (src/client) as an npm package that any project
 * installs, with or without TypeScript, a bundler or tsx: `npm install ./dist-client/private-route-client-<version>.tgz`.
 *
 * The package (`@private-route/client`, the root package.json's version) holds:
 * - `index.js`: the client (src/client/index.ts) bundled to one ES module by esbuild for the browser platform, so a
 *   Node built-in anywhere in it fails this build; it imports only `hono/client` (the package's one dependency, at
 *   the root's range) and bundles the few of the service's modules it runs (src/client, src/domain (pure, it imports
 *   nothing outside itself), src/errors.ts);
 * - `webhooks.js`: `verifyWebhook` (src/client/webhooks.ts), for servers only: it uses node:crypto;
 * - `index.cjs`, `webhooks.cjs`: the same two bundles as CommonJS, for `require('@private-route/client')` (the
 *   package's `exports` send `require` there and `import` to the ES modules);
 * - `index.d.ts`, `webhooks.d.ts`: the declarations, bundled by rollup-plugin-dts into one self-contained file per
 *   entry (the client's answers are the server's own types, spread over src/quote, src/transfers, src/providers and
 *   src/domain: they are copied in, so a consumer needs none of the server's dependencies to type-check), and the
 *   same text as `.d.cts` for CommonJS consumers (TypeScript types a `require` by the `.d.cts` beside the `.cjs`).
 *
 * Default output: dist-client/ (gitignored): the package's folder `package/` and the tarball beside it.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { rollup } from 'rollup';
import { dts } from 'rollup-plugin-dts';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const log = (line: string) => process.stdout.write(`${line}\n`);

export const CLIENT_PACKAGE_NAME = '@private-route/client';

/**
 * The entries of the package: its subpath, the source it is built from, the platform its code may rely on, the
 * imports its JavaScript keeps (the rest is bundled in) and the repository's files it may bundle. The last two are
 * checked: the client imports the server's modules as types only, and a value import would ship server code.
 */
const ENTRIES = [
  {
    subpath: '.',
    file: 'index',
    source: 'src/client/index.ts',
    platform: 'browser',
    imports: ['hono/client'],
    bundles: (input: string) => input.startsWith('src/client/') || input.startsWith('src/domain/') || input === 'src/errors.ts',
  },
  {
    subpath: './webhooks',
    file: 'webhooks',
    source: 'src/client/webhooks.ts',
    platform: 'node',
    imports: ['node:crypto'],
    bundles: (input: string) => input === 'src/client/webhooks.ts' || input === 'src/webhooks/signature.ts',
  },
] as const;

/**
 * The only types the declarations take from a dependency: viem's hex strings (a token's address). They are declared
 * in the package as viem declares them by default, so that it does not depend on viem (hundreds of files) for them.
 */
const VIEM_HEX_TYPES = new Set(['Address', 'Hex']);

export interface PackedClient {
  /** The tarball (`npm install <tarball>`). */
  tarball: string;
  /** The package's folder, as the tarball holds it. */
  packageDir: string;
}

/** Builds the package into `<outDir>/package` and packs it to `<outDir>/private-route-client-<version>.tgz`. */
export async function packClient(outDir: string): Promise<PackedClient> {
  const root = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string; dependencies: Record<string, string> };
  const packageDir = path.join(outDir, 'package');
  rmSync(packageDir, { recursive: true, force: true });
  mkdirSync(packageDir, { recursive: true });

  for (const entry of ENTRIES) {
    for (const [format, extension] of [
      ['esm', 'js'],
      ['cjs', 'cjs'],
    ] as const) {
      const result = await build({
        absWorkingDir: repoRoot,
        entryPoints: [path.join(repoRoot, entry.source)],
        outfile: path.join(packageDir, `${entry.file}.${extension}`),
        bundle: true,
        format,
        platform: entry.platform,
        target: 'es2022',
        external: ['hono'],
        metafile: true,
        logLevel: 'warning',
      });
      checkBundle(entry, result.metafile);
    }
  }

  const declarations = await rollup({
    input: Object.fromEntries(ENTRIES.map((entry) => [entry.file, path.join(repoRoot, entry.source)])),
    plugins: [dts({ tsconfig: path.join(repoRoot, 'tsconfig.json') })],
  });
  await declarations.write({ dir: packageDir, format: 'es' });
  await declarations.close();
  for (const entry of ENTRIES) {
    const file = path.join(packageDir, `${entry.file}.d.ts`);
    const text = inlineViemTypes(readFileSync(file, 'utf8'));
    writeFileSync(file, text);
    // Self-contained: no import of another package or file, no triple-slash reference (e.g. to @types/node).
    const outside = text.split('\n').filter((line) => /^\s*(import\s|export\s.*\sfrom\s|\/\/\/\s*<reference)/.test(line));
    if (outside.length > 0) throw new Error(`${entry.file}.d.ts is not self-contained: ${outside.join('; ')}`);
    writeFileSync(path.join(packageDir, `${entry.file}.d.cts`), text);
  }

  const manifest = {
    name: CLIENT_PACKAGE_NAME,
    version: root.version,
    description: 'Typed client of the private-route API: quotes, idempotent creates, status by Server-Sent Events; browsers and Node ≥ 20.',
    type: 'module',
    sideEffects: false,
    exports: {
      ...Object.fromEntries(
        ENTRIES.map((entry) => [
          entry.subpath,
          {
            import: { types: `./${entry.file}.d.ts`, default: `./${entry.file}.js` },
            require: { types: `./${entry.file}.d.cts`, default: `./${entry.file}.cjs` },
          },
        ]),
      ),
      './package.json': './package.json',
    },
    types: './index.d.ts',
    main: './index.cjs',
    module: './index.js',
    files: ENTRIES.flatMap((entry) => [`${entry.file}.js`, `${entry.file}.cjs`, `${entry.file}.d.ts`, `${entry.file}.d.cts`]),
    engines: { node: '>=20' },
    dependencies: { hono: root.dependencies.hono },
  };
  writeFileSync(path.join(packageDir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(path.join(packageDir, 'README.md'), README);

  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', outDir], { cwd: packageDir, encoding: 'utf8' }),
  ) as [{ filename: string }];
  return { tarball: path.join(outDir, packed.filename), packageDir };
}

/** The entry's bundle keeps only its declared imports and holds only the files it may bundle. */
function checkBundle(entry: (typeof ENTRIES)[number], metafile: Metafile): void {
  const [output] = Object.values(metafile.outputs);
  const allowed: readonly string[] = entry.imports;
  const imports = (output?.imports ?? []).map((imported) => imported.path).filter((imported) => !allowed.includes(imported));
  if (imports.length > 0) throw new Error(`${entry.source} imports ${imports.join(', ')} at run time: only ${allowed.join(', ')} may stay external`);
  const foreign = Object.keys(metafile.inputs).filter((input) => !entry.bundles(input));
  if (foreign.length > 0) throw new Error(`${entry.source} would ship server code (${foreign.join(', ')}): the client may import it as types only`);
}

/** Replaces `import { Address } from 'viem';` with the alias itself, as viem declares it: a `0x${string}` template type. */
function inlineViemTypes(declarations: string): string {
  return declarations.replace(/^import \{ ([\w, ]+) \} from 'viem';$/m, (_line, names: string) =>
    names
      .split(', ')
      .map((name) => {
        if (!VIEM_HEX_TYPES.has(name)) throw new Error(`the declarations use viem's ${name}: declare it in scripts/pack-client.ts`);
        return `type ${name} = \`0x\${string}\`;`;
      })
      .join('\n'),
  );
}

const README = `# @private-route/client

The typed client of the private-route API, built from the service's repository (\`npm run pack:client\`).

\`\`\`js
import { createPrivateRouteClient } from '@private-route/client';

const client = createPrivateRouteClient({ baseUrl: 'https://route.example' });
const quote = await client.quote({ sourceChainId: 8453, destChainId: 42161, amount: '100' });
\`\`\`

- \`@private-route/client\`: ES module and CommonJS (\`require('@private-route/client')\`), no Node built-ins (browsers
  and Node ≥ 20; it uses \`fetch\`). Load it one way per program: the two builds' error classes are distinct, so
  \`instanceof\` holds only against the build that threw.
- \`@private-route/client/webhooks\`: \`verifyWebhook\` for a webhook receiver; Node only (node:crypto).

Declarations are included (TypeScript: \`"moduleResolution": "bundler"\`, \`"node16"\` or \`"nodenext"\`). The whole
guide is docs/client.md in the service's repository.
`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { out: { type: 'string', default: path.join(repoRoot, 'dist-client') } } });
  const started = Date.now();
  const outDir = path.resolve(values.out);
  mkdirSync(outDir, { recursive: true });
  const { tarball } = await packClient(outDir);
  log(`packed ${CLIENT_PACKAGE_NAME} in ${((Date.now() - started) / 1000).toFixed(1)} s: ${path.relative(process.cwd(), tarball) || tarball}`);
  log(`install it with: npm install ${tarball}`);
}
