#!/usr/bin/env bash
# Production code (src/, workflows/, activities/) never reaches into development code: the local stack and its
# emulators (devnet/), tests, benchmarks or scripts. Any relative path into those folders fails the check.
set -euo pipefail
cd "$(dirname "$0")/.."
if grep -rnE "['\"](\.\./)+(devnet|test|bench|scripts)(/|['\"])" src workflows activities; then
  echo "production code must not import development code (devnet/, test/, bench/, scripts/): move what it needs into src/" >&2
  exit 1
fi
echo "production code imports no development code"
