#!/usr/bin/env bash
# The browser tests (/docs: test/api/docs-page.test.ts; the tracking page: test/api/tracking-page.test.ts and
# test/e2e/transfer.test.ts) drive Debian's chromium through playwright-core; no browser is
# ever downloaded. On a fresh Debian machine this installs the distribution's package (as root, or with
# passwordless sudo); anywhere else it says what to install.
set -euo pipefail
CHROMIUM=/usr/bin/chromium
[ -x "$CHROMIUM" ] && exit 0
if ! command -v apt-get >/dev/null; then
  echo "$CHROMIUM is missing and this is not a Debian-like system: install a chromium at $CHROMIUM to run the /docs browser test" >&2
  exit 1
fi
if [ "$(id -u)" = 0 ]; then
  as_root=()
elif sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  echo "$CHROMIUM is missing: run 'sudo apt-get install -y --no-install-recommends chromium' (the /docs browser test needs it)" >&2
  exit 1
fi
echo "installing Debian's chromium for the /docs browser test (apt-get)…"
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
[ -x "$CHROMIUM" ] || { echo "apt-get installed chromium but $CHROMIUM is not there" >&2; exit 1; }
