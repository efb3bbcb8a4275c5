/**
 * Compiles every devnet/contracts/*.sol, devnet/contracts/cctp/*.sol and devnet/contracts/privacy-pools/*.sol with solcjs, together
 * with two Groth16 verifiers that snarkjs generates from the production zkeys of the npm package
 * @fatsolutions/privacy-pools-core-circuits (WithdrawalVerifier from withdraw.zkey, CommitmentVerifier from
 * commitment.zkey), and writes one TypeScript module per deployable contract to
 * devnet/artifacts/<ContractName>.ts (ABI + creation bytecode, both `as const` so viem infers types, plus
 * the link placeholders of the libraries it calls). Imports like "poseidon-solidity/PoseidonT3.sol" resolve
 * from node_modules. The generated files are committed, so the devnet never needs a compiler at start-up.
 *
 *   node --import tsx scripts/build-contracts.ts           regenerate the artifacts
 *   node --import tsx scripts/build-contracts.ts --check   exit 1 if they are out of date
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import solc from 'solc';
import * as snarkjs from 'snarkjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CONTRACTS_DIR = join(ROOT, 'devnet', 'contracts');
const ARTIFACTS_DIR = join(ROOT, 'devnet', 'artifacts');

// anvil's default hardfork is newer than shanghai, so shanghai bytecode runs there unchanged.
const EVM_VERSION = 'shanghai';
const OPTIMIZER_RUNS = 200;

interface SolcContractOutput {
  abi: { type: string }[];
  evm: { bytecode: { object: string; linkReferences?: Record<string, Record<string, { start: number; length: number }[]>> } };
}

interface SolcOutput {
  errors?: { severity: 'error' | 'warning' | 'info'; formattedMessage: string }[];
  contracts?: Record<string, Record<string, SolcContractOutput>>;
}

/** contracts/*.sol and the sources of these subdirectories, compiled together (imports between them resolve). */
const SOURCE_SUBDIRS = ['cctp', 'privacy-pools'];

/** Verifiers generated from the circuit package's proving keys, as (virtual) sources of the compilation. */
const CIRCUITS_DIR = join(ROOT, 'node_modules', '@fatsolutions', 'privacy-pools-core-circuits', 'artifacts');
const GENERATED_VERIFIERS = [
  { contract: 'WithdrawalVerifier', zkey: 'withdraw.zkey' },
  { contract: 'CommitmentVerifier', zkey: 'commitment.zkey' },
];

async function generatedVerifierSources(): Promise<Record<string, { content: string }>> {
  const template = readFileSync(join(ROOT, 'node_modules', 'snarkjs', 'templates', 'verifier_groth16.sol.ejs'), 'utf8');
  const sources: Record<string, { content: string }> = {};
  for (const { contract, zkey } of GENERATED_VERIFIERS) {
    const code = (await snarkjs.zKey.exportSolidityVerifier(join(CIRCUITS_DIR, zkey), { groth16: template })) as string;
    if (!code.includes('contract Groth16Verifier')) throw new Error(`unexpected snarkjs verifier output for ${zkey}`);
    sources[`contracts/privacy-pools/generated/${contract}.sol`] = { content: code.replace('contract Groth16Verifier', `contract ${contract}`) };
  }
  return sources;
}

/** Resolves Solidity imports of npm packages (poseidon-solidity, @zk-kit/lean-imt.sol) from node_modules. */
function findImport(path: string): { contents: string } | { error: string } {
  const file = join(ROOT, 'node_modules', path);
  return existsSync(file) ? { contents: readFileSync(file, 'utf8') } : { error: `import not found: ${path}` };
}

/** Returns the expected artifacts: file name (inside devnet/artifacts) => file content. */
export async function generateArtifacts(): Promise<Map<string, string>> {
  const sourceFiles = ['', ...SOURCE_SUBDIRS]
    .flatMap((dir) =>
      readdirSync(join(CONTRACTS_DIR, dir))
        .filter((f) => f.endsWith('.sol'))
        .map((f) => (dir ? `${dir}/${f}` : f)),
    )
    .sort();
  const sources: Record<string, { content: string }> = {};
  for (const file of sourceFiles) {
    sources[`contracts/${file}`] = { content: readFileSync(join(CONTRACTS_DIR, file), 'utf8') };
  }
  Object.assign(sources, await generatedVerifierSources());

  const input = {
    language: 'Solidity',
    sources,
    settings: {
      optimizer: { enabled: true, runs: OPTIMIZER_RUNS },
      evmVersion: EVM_VERSION,
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.bytecode.linkReferences'] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImport })) as SolcOutput;

  const problems = output.errors ?? [];
  for (const p of problems.filter((p) => p.severity === 'warning')) console.warn(p.formattedMessage);
  const errors = problems.filter((p) => p.severity === 'error');
  if (errors.length > 0) {
    throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join('\n')}`);
  }

  const compilerVersion = solc.version() as string;
  const all = Object.entries(output.contracts ?? {});
  // Libraries our contracts link against (Poseidon) get artifacts too, so the devnet can deploy them.
  const linked = new Set(
    all.flatMap(([, contracts]) =>
      Object.values(contracts).flatMap((c) => Object.values(c.evm.bytecode.linkReferences ?? {}).flatMap((refs) => Object.keys(refs))),
    ),
  );
  const artifacts = new Map<string, string>();
  for (const [sourcePath, contracts] of all) {
    const content = sources[sourcePath]?.content ?? (findImport(sourcePath) as { contents: string }).contents;
    const sourceHash = createHash('sha256').update(content).digest('hex');
    for (const [contractName, contract] of Object.entries(contracts)) {
      // Interfaces and abstract contracts have no bytecode and nothing to deploy; internal-only libraries
      // (no functions in their ABI) are inlined; other npm sources matter only when linked.
      if (contract.evm.bytecode.object === '' || !contract.abi.some((item) => item.type === 'function')) continue;
      if (!sourcePath.startsWith('contracts/') && !linked.has(contractName)) continue;
      if (artifacts.has(`${contractName}.ts`)) {
        throw new Error(`contract name ${contractName} is defined in more than one source file`);
      }
      artifacts.set(`${contractName}.ts`, renderArtifact({ sourcePath, sourceHash, compilerVersion, contractName, contract }));
    }
  }
  return artifacts;
}

function renderArtifact(a: { sourcePath: string; sourceHash: string; compilerVersion: string; contractName: string; contract: SolcContractOutput }): string {
  const ident = a.contractName[0]!.toLowerCase() + a.contractName.slice(1);
  const { object, linkReferences = {} } = a.contract.evm.bytecode;
  // Library name => the placeholder solc left in the bytecode for its address.
  const libraries = Object.fromEntries(
    Object.values(linkReferences).flatMap((refs) =>
      Object.entries(refs).map(([name, [ref]]) => [name, object.slice(ref!.start * 2, (ref!.start + ref!.length) * 2)]),
    ),
  );
  const links = Object.keys(libraries).length > 0 ? ['', `export const ${ident}LinkReferences = ${JSON.stringify(libraries, null, 2)} as const;`] : [];
  return [
    `// generated by scripts/build-contracts.ts from ${a.sourcePath} — do not edit`,
    `// source sha256: ${a.sourceHash}`,
    `// solc ${a.compilerVersion}, optimizer ${OPTIMIZER_RUNS} runs, evmVersion ${EVM_VERSION}`,
    '',
    `export const ${ident}Abi = ${JSON.stringify(a.contract.abi, null, 2)} as const;`,
    '',
    `export const ${ident}Bytecode = '0x${object}' as const;`,
    ...links,
    '',
  ].join('\n');
}

function existingArtifactFiles(): string[] {
  if (!existsSync(ARTIFACTS_DIR)) return [];
  return readdirSync(ARTIFACTS_DIR).filter((f) => f.endsWith('.ts'));
}

/** Lists the artifact files that are missing, differ from a fresh build, or have no source any more. */
export async function staleArtifacts(): Promise<string[]> {
  const expected = await generateArtifacts();
  const stale: string[] = [];
  for (const [file, content] of expected) {
    const path = join(ARTIFACTS_DIR, file);
    if (!existsSync(path) || readFileSync(path, 'utf8') !== content) stale.push(file);
  }
  for (const file of existingArtifactFiles()) {
    if (!expected.has(file)) stale.push(file);
  }
  return stale;
}

export async function writeArtifacts(): Promise<string[]> {
  const artifacts = await generateArtifacts();
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  for (const file of existingArtifactFiles()) {
    if (!artifacts.has(file)) rmSync(join(ARTIFACTS_DIR, file));
  }
  for (const [file, content] of artifacts) writeFileSync(join(ARTIFACTS_DIR, file), content);
  return [...artifacts.keys()];
}

async function main(): Promise<void> {
  if (process.argv.includes('--check')) {
    const stale = await staleArtifacts();
    if (stale.length > 0) {
      console.error(`contract artifacts are out of date: ${stale.join(', ')}\nrun: node --import tsx scripts/build-contracts.ts`);
      process.exit(1);
    }
    console.log('contract artifacts are up to date');
    return;
  }
  const written = await writeArtifacts();
  console.log(`wrote ${written.map((f) => `devnet/artifacts/${f}`).join(', ')}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // snarkjs keeps worker threads alive; the build is done once main settles.
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
