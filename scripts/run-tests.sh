#!/usr/bin/env bash
# `npm test`: every layer of tests in four lanes side by side, each running its files one at a time:
# 1. the Privacy Pools whole-stack tests and the reorgs (its output streams as it comes);
# 2. burn-and-mint, crash recovery, the drill and recovery of failed routes;
# 3. the other whole-stack tests;
# 4. the rehearsal of a first deployment, then the unit, workflow, API and integration tests.
# Lanes 2–4's output follows when all are done. The whole-stack files mostly wait on chains, proofs and timers, so four
# share two cores well. Each lane takes the ports its servers listen on from a TEST_PORT_RANGE of its own, below the
# OS's ephemeral ports (32768 and up): no port one picks can be picked by another, or be taken meanwhile as the source
# port of some connection.
set -uo pipefail
cd "$(dirname "$0")/.."

# The local stack's signer keeps its keys in a SoftHSM2 token, as production's keeps them in an HSM (docs/security.md).
export DEVNET_SIGNER_KEYS=pkcs11
# Each file gets 10 minutes (TEST_TIMEOUT_MS), the Privacy Pools file 15: its routes wait out the longest privacy wait.
run() { node --import tsx --test --test-concurrency=1 --test-timeout="${TEST_TIMEOUT_MS:-600000}" "$@"; }

lane1=(test/e2e/privacy-pools.test.ts test/e2e/reorg.test.ts)
lane2=(test/e2e/cctp-transfer.test.ts test/e2e/crash-recovery.test.ts test/e2e/drill.test.ts test/e2e/recover.test.ts)
lane4_e2e=(test/e2e/production-build.test.ts)
lane3=()
for file in test/e2e/*.test.ts; do
  [[ " ${lane1[*]} ${lane2[*]} ${lane4_e2e[*]} " == *" $file "* ]] || lane3+=("$file")
done

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
TEST_PORT_RANGE=16000-21999 run "${lane2[@]}" >"$logs/2" 2>&1 &
pid2=$!
TEST_PORT_RANGE=22000-27999 run "${lane3[@]}" >"$logs/3" 2>&1 &
pid3=$!
TEST_PORT_RANGE=28000-32767 run "${lane4_e2e[@]}" test/unit/*.test.ts test/workflow/*.test.ts test/api/*.test.ts test/integration/*.test.ts >"$logs/4" 2>&1 &
pid4=$!

echo "== lane 1: ${lane1[*]} (lanes 2–4 run beside it; their output follows)"
TEST_PORT_RANGE=10000-15999 TEST_TIMEOUT_MS=900000 run "${lane1[@]}"
status1=$?
wait "$pid2"; status2=$?
wait "$pid3"; status3=$?
wait "$pid4"; status4=$?

echo "== lane 2: ${lane2[*]}"
cat "$logs/2"
echo "== lane 3: the other whole-stack tests"
cat "$logs/3"
echo "== lane 4: the rehearsal, then unit, workflow, api and integration tests"
cat "$logs/4"
verdict() { [ "$1" = 0 ] && echo passed || echo "FAILED (exit $1)"; }
echo "== lane 1: $(verdict $status1); lane 2: $(verdict $status2); lane 3: $(verdict $status3); lane 4: $(verdict $status4)"
[ $status1 = 0 ] && [ $status2 = 0 ] && [ $status3 = 0 ] && [ $status4 = 0 ]
