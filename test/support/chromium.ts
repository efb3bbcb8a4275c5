/** Debian's chromium driven by playwright-core, as every browser test runs it (never a downloaded browser). */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';

/** A headless chromium; fails with what to install when the machine has none (`npm test` installs it first). */
export async function launchChromium(): Promise<Browser> {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: bash scripts/ensure-test-packages.sh installs Debian's chromium`);
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'], timeout: 30_000 });
}
