#!/usr/bin/env bash
# Layout checks, fast enough to run before every commit (.ci/run runs them):
# 1. Production code (src/, workflows/, activities/) never reaches into development code: the local stack and its
#    emulators (devnet/), tests, benchmarks or scripts. Any relative path into those folders fails the check.
# 2. Comments and docs name no repository path that does not exist (scripts/check-paths.mjs says which forms count).
set -euo pipefail
cd "$(dirname "$0")/.."
if grep -rnE "['\"](\.\./)+(devnet|test|bench|scripts)(/|['\"])" src workflows activities; then
  echo "production code must not import development code (devnet/, test/, bench/, scripts/): move what it needs into src/" >&2
  exit 1
fi
echo "production code imports no development code"
node scripts/check-paths.mjs
