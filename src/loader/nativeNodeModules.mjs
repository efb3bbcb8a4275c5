/**
 * A module `load` hook (see ./register.mjs): an ES module under node_modules is read and handed to Node as
 * it is; everything else (our TypeScript, CommonJS packages, JSON) goes on to the next hook, tsx's.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Package "type" by folder, found by walking up to the nearest package.json. */
const packageTypes = new Map();

function packageType(folder) {
  const known = packageTypes.get(folder);
  if (known) return known;
  let type;
  try {
    type = JSON.parse(readFileSync(path.join(folder, 'package.json'), 'utf8')).type === 'module' ? 'module' : 'commonjs';
  } catch {
    const parent = path.dirname(folder);
    type = parent === folder ? 'commonjs' : packageType(parent);
  }
  packageTypes.set(folder, type);
  return type;
}

function isNodeModulesEsm(url) {
  if (!url.startsWith('file:') || !url.includes('/node_modules/')) return false;
  const file = fileURLToPath(url);
  if (file.endsWith('.mjs')) return true;
  return file.endsWith('.js') && packageType(path.dirname(file)) === 'module';
}

export async function load(url, context, nextLoad) {
  if (!isNodeModulesEsm(url)) return nextLoad(url, context);
  return { format: 'module', source: await readFile(fileURLToPath(url)), shortCircuit: true };
}
