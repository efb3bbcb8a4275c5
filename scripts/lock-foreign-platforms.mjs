#!/usr/bin/env node
// Adds package-lock entries for the other platforms' optional binary packages (darwin, win32, arm64, musl…)
// that this machine's npm registry mirror does not carry. npm records such entries itself when it can
// fetch their manifests; without them `npm ci` refuses the lock file. The entries carry os/cpu/libc, so
// every platform installs only its own binary. Run after `npm install` changes the lock file.
import { readFileSync, writeFileSync } from 'node:fs';

const lockPath = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(lockPath, 'utf8'));
const packages = lock.packages;

const OS = { darwin: 'darwin', linux: 'linux', win32: 'win32', windows: 'win32', android: 'android', freebsd: 'freebsd' };
const CPU = { arm64: 'arm64', x64: 'x64', amd64: 'x64', ia32: 'ia32', arm: 'arm', ppc64: 'ppc64', s390x: 's390x', riscv64: 'riscv64', loong64: 'loong64' };

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.map((p) => OS[p]).find(Boolean);
  const cpu = parts.map((p) => CPU[p]).find(Boolean);
  if (!os || !cpu) return null;
  const entry = { os: [os], cpu: [cpu] };
  if (parts.includes('musl')) entry.libc = ['musl'];
  else if (os === 'linux' && (parts.includes('gnu') || parts.includes('gnueabihf'))) entry.libc = ['glibc'];
  return entry;
}

let added = 0;
for (const [path, entry] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `${path ? `${path}/` : ''}node_modules/${name}`;
    const hoisted = `node_modules/${name}`;
    if (packages[key] || packages[hoisted]) continue;
    const platform = platformOf(name);
    if (!platform) continue;
    packages[hoisted] = { version: version.replace(/^[\^~=]/, ''), optional: true, ...platform };
    added += 1;
  }
}
lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${added} foreign-platform optional entries to package-lock.json`);
