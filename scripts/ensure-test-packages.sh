#!/usr/bin/env bash
# The Debian packages the tests use, installed when missing (as root, or with passwordless sudo); anywhere else it
# says what to install. Nothing is ever downloaded but by apt-get.
# - chromium: the browser tests (/docs: test/api/docs-page.test.ts; the tracking page: test/api/tracking-page.test.ts
#   and test/e2e/transfer.test.ts) drive it through playwright-core;
# - softhsm2: the PKCS#11 token the signer keeps its keys in (test/integration/signer-token.test.ts, and the local
#   stack's signer under npm test: DEVNET_SIGNER_KEYS=pkcs11).
set -euo pipefail
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -f /usr/lib/softhsm/libsofthsm2.so ] && command -v softhsm2-util >/dev/null || missing+=(softhsm2)
# pkcs11js (the signer's PKCS#11 binding) is an optional dependency built by node-gyp at npm install: where g++ was
# missing then, the native prover's build (npm's postinstall) has installed it since, so build the binding now.
if [ ! -f node_modules/pkcs11js/build/Release/pkcs11.node ]; then
  echo "building pkcs11js, the signer's PKCS#11 binding…"
  if [ -d node_modules/pkcs11js ]; then npm rebuild pkcs11js >/dev/null; else
    npm install --no-save --no-audit --no-fund "pkcs11js@$(node -p "require('./package.json').optionalDependencies.pkcs11js")" >/dev/null
  fi
fi
[ ${#missing[@]} = 0 ] && exit 0
if ! command -v apt-get >/dev/null; then
  echo "missing ${missing[*]} and this is not a Debian-like system: install them (chromium at /usr/bin/chromium, SoftHSM2's /usr/lib/softhsm/libsofthsm2.so) to run the tests" >&2
  exit 1
fi
if [ "$(id -u)" = 0 ]; then
  as_root=()
elif sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  echo "missing ${missing[*]}: run 'sudo apt-get install -y --no-install-recommends ${missing[*]}' (the tests need them)" >&2
  exit 1
fi
echo "installing Debian's ${missing[*]} for the tests (apt-get)…"
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
[ -x /usr/bin/chromium ] || { echo "apt-get ran but /usr/bin/chromium is not there" >&2; exit 1; }
[ -f /usr/lib/softhsm/libsofthsm2.so ] || { echo "apt-get ran but /usr/lib/softhsm/libsofthsm2.so is not there" >&2; exit 1; }
