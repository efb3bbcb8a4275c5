#!/usr/bin/env bash
# `npm test`: every layer of tests, in two processes side by side, each running its files one at a time:
# - the first runs the longest whole-stack tests (privacy pools, burn-and-mint, recovery, crash recovery, the drill, reorgs);
#   its output streams as it comes;
# - the second runs the other whole-stack tests, then the unit, workflow, API and integration tests; its output follows
#   when both are done.
# The whole-stack files mostly wait on chains, proofs and timers, so the two share the machine's cores well, and the
# two halves take about as long. Each process takes the ports its servers listen on from a TEST_PORT_RANGE of its own,
# below the OS's ephemeral ports (32768 and up): no port one picks can be picked by the other, or be taken meanwhile
# as the source port of some connection.
set -uo pipefail
cd "$(dirname "$0")/.."

# The local stack's signer keeps its keys in a SoftHSM2 token, as production's keeps them in an HSM (docs/security.md).
export DEVNET_SIGNER_KEYS=pkcs11
run() { node --import tsx --test --test-concurrency=1 --test-timeout=600000 "$@"; }

long=(test/e2e/privacy-pools.test.ts test/e2e/cctp-transfer.test.ts test/e2e/recover.test.ts test/e2e/crash-recovery.test.ts test/e2e/drill.test.ts test/e2e/reorg.test.ts)
rest=()
for file in test/e2e/*.test.ts; do
  [[ " ${long[*]} " == *" $file "* ]] || rest+=("$file")
done

rest_log=$(mktemp)
trap 'rm -f "$rest_log"' EXIT
TEST_PORT_RANGE=20000-32767 run "${rest[@]}" test/unit/*.test.ts test/workflow/*.test.ts test/api/*.test.ts test/integration/*.test.ts >"$rest_log" 2>&1 &
rest_pid=$!

echo "== the longest whole-stack tests (${long[*]}); the other tests run beside them"
TEST_PORT_RANGE=10000-19999 run "${long[@]}"
long_status=$?
wait "$rest_pid"
rest_status=$?

echo "== the other whole-stack tests, then unit, workflow, api and integration tests"
cat "$rest_log"
verdict() { [ "$1" = 0 ] && echo passed || echo "FAILED (exit $1)"; }
echo "== longest whole-stack tests: $(verdict $long_status); the rest: $(verdict $rest_status)"
[ $long_status = 0 ] && [ $rest_status = 0 ]
