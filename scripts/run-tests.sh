#!/usr/bin/env bash
# `npm test`: every layer of tests. The whole-stack tests (test/e2e) run one file at a time; beside them, in a
# second process, the unit, workflow, API and integration tests run one file at a time too. The e2e files mostly
# wait on chains, proofs and timers, so the two groups share the machine's cores well. Each group takes the ports
# its servers listen on from a TEST_PORT_RANGE of its own, below the OS's ephemeral ports (32768 and up): no
# port one group picks can be picked by the other, or be taken meanwhile as the source port of some connection.
# The e2e output streams as it comes; the other group's follows when both are done.
set -uo pipefail
cd "$(dirname "$0")/.."

run() { node --import tsx --test --test-concurrency=1 --test-timeout=600000 "$@"; }

parts_log=$(mktemp)
trap 'rm -f "$parts_log"' EXIT
TEST_PORT_RANGE=20000-32767 run test/unit/*.test.ts test/workflow/*.test.ts test/api/*.test.ts test/integration/*.test.ts >"$parts_log" 2>&1 &
parts=$!

echo "== e2e tests (test/e2e); the unit, workflow, api and integration tests run beside them"
TEST_PORT_RANGE=10000-19999 run test/e2e/*.test.ts
e2e_status=$?
wait "$parts"
parts_status=$?

echo "== unit, workflow, api and integration tests"
cat "$parts_log"
echo "== e2e: $([ $e2e_status = 0 ] && echo passed || echo "FAILED (exit $e2e_status)"); unit, workflow, api, integration: $([ $parts_status = 0 ] && echo passed || echo "FAILED (exit $parts_status)")"
[ $e2e_status = 0 ] && [ $parts_status = 0 ]
