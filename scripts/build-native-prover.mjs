#!/usr/bin/env node
/**
 * Builds the native Groth16 prover (native/groth16-prover/prover.cpp) on iden3's ffiasm, from the ffiasm sources
 * npm installed: ffiasm generates the BN254 field arithmetic (x86-64 assembly), nasm assembles it, g++ compiles
 * the prover with ffiasm's curve, FFT and multi-exponentiation. Runs at `npm ci` (postinstall) and as
 * `npm run build:prover`. It needs g++, nasm and GMP's headers: where they are missing it installs Debian's
 * packages with apt-get (as root, or with passwordless sudo), as scripts/ensure-test-packages.sh does for chromium and softhsm2;
 * NATIVE_PROVER_APT=0 says not to.
 *
 * Never fails the install: where the prover cannot be built (another architecture, no compiler and no way to
 * install one), it says why and the service proves with snarkjs (PROVER=auto). `--strict` makes those cases
 * errors. The build is skipped when its inputs (the source, ffiasm's version, the flags) have not changed.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const strict = process.argv.includes('--strict');
const root = fileURLToPath(new URL('..', import.meta.url));
const source = path.join(root, 'native/groth16-prover/prover.cpp');
const out = path.join(root, 'native/groth16-prover/build');
const binary = path.join(out, 'groth16-prover');
const stampFile = path.join(out, 'inputs.sha256');
const PACKAGES = { 'g++': 'g++', nasm: 'nasm', gmp: 'libgmp-dev' };
const BN254 = {
  Fq: '21888242871839275222246405745257275088696311157297823662689037894645226208583',
  Fr: '21888242871839275222246405745257275088548364400416034343698204186575808495617',
};
const CXXFLAGS = ['-O3', '-std=c++17', '-fopenmp', '-DNDEBUG'];

const say = (line) => process.stdout.write(`native prover: ${line}\n`);

function giveUp(reason) {
  const line = `not built: ${reason}. The service proves with snarkjs (about 4x slower; docs/performance.md)`;
  if (strict) {
    process.stderr.write(`native prover: ${line}\n`);
    process.exit(1);
  }
  say(line);
  process.exit(0);
}

try {
  build();
} catch (error) {
  giveUp(`the build failed (${String(error?.message ?? error).split('\n')[0]})`);
}

function build() {
  if (process.platform !== 'linux' || process.arch !== 'x64')
    giveUp(`ffiasm's field assembly is x86-64 Linux only (this is ${process.platform}/${process.arch})`);

  let ffiasm;
  try {
    ffiasm = path.dirname(createRequire(import.meta.url).resolve('ffiasm/package.json'));
  } catch {
    giveUp('the ffiasm package is not installed');
  }
  const ffiasmVersion = JSON.parse(readFileSync(path.join(ffiasm, 'package.json'), 'utf8')).version;
  const stamp = createHash('sha256')
    .update(readFileSync(source))
    .update(`ffiasm ${ffiasmVersion} ${CXXFLAGS.join(' ')}`)
    .digest('hex');
  if (existsSync(binary) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) {
    say(`up to date (${path.relative(root, binary)})`);
    process.exit(0);
  }

  const has = (command) => spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
  const hasGmp = () => existsSync('/usr/include/gmp.h') || existsSync('/usr/include/x86_64-linux-gnu/gmp.h');
  const missing = () => [has('g++') ? null : 'g++', has('nasm') ? null : 'nasm', hasGmp() ? null : 'gmp'].filter(Boolean);

  if (missing().length > 0) {
    const packages = missing().map((tool) => PACKAGES[tool]);
    if (!has('apt-get')) giveUp(`${packages.join(', ')} missing and this is not a Debian-like system`);
    if (process.env.NATIVE_PROVER_APT === '0') giveUp(`${packages.join(', ')} missing (NATIVE_PROVER_APT=0: not installing them)`);
    const asRoot = process.getuid?.() === 0 ? [] : spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0 ? ['sudo', '-n'] : null;
    if (!asRoot) giveUp(`${packages.join(', ')} missing: run 'sudo apt-get install -y ${packages.join(' ')}', then 'npm run build:prover'`);
    say(`installing Debian's ${packages.join(', ')} (apt-get)…`);
    const apt = (...args) => {
      const [command, ...rest] = [...asRoot, 'env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', ...args];
      return spawnSync(command, rest, { stdio: ['ignore', 'ignore', 'inherit'] }).status === 0;
    };
    if (!apt('update', '-qq') || !apt('install', '-y', '-qq', '--no-install-recommends', ...packages) || missing().length > 0) {
      giveUp(`apt-get could not install ${packages.join(', ')}`);
    }
  }

  const started = Date.now();
  const work = `${out}.tmp-${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    const run = (command, args) => execFileSync(command, args, { cwd: work, stdio: ['ignore', 'ignore', 'inherit'] });
    for (const [name, prime] of Object.entries(BN254)) {
      run(process.execPath, [path.join(ffiasm, 'src/buildzqfield.js'), '-q', prime, '-n', name]);
      run('nasm', ['-felf64', `${name.toLowerCase()}.asm`, '-o', `${name.toLowerCase()}.o`]);
    }
    const c = path.join(ffiasm, 'c');
    run('g++', [
      ...CXXFLAGS,
      '-I.',
      `-I${c}`,
      source,
      ...['alt_bn128.cpp', 'naf.cpp', 'splitparstr.cpp', 'misc.cpp'].map((file) => path.join(c, file)),
      'fq.cpp',
      'fr.cpp',
      'fq.o',
      'fr.o',
      '-lgmp',
      '-Wl,-z,noexecstack',
      '-o',
      'groth16-prover',
    ]);
    writeFileSync(path.join(work, 'inputs.sha256'), stamp);
    for (const generated of ['fq.asm', 'fr.asm', 'fq.o', 'fr.o']) rmSync(path.join(work, generated));
    rmSync(out, { recursive: true, force: true });
    renameSync(work, out);
  } catch (error) {
    rmSync(work, { recursive: true, force: true });
    giveUp(`the build failed (${error.message.split('\n')[0]})`);
  }
  say(`built ${path.relative(root, binary)} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
