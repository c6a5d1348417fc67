#!/usr/bin/env bash
# The mutation check (issue 26): puts each realistic bug of
# scripts/mutations.txt in the code, one at a time and without writing the
# tree (go test -overlay), runs the owning package's tests and prints
# caught / missed, per package. Not part of the default go test.
#   scripts/mutate.sh                      every mutation
#   scripts/mutate.sh -pkg mcpserver,flow  only those packages' mutations
#   scripts/mutate.sh -run 'lease'         only mutations whose PKG/ID matches
#   scripts/mutate.sh -check               only check every mutation still applies
#   scripts/mutate.sh -j 2                 two mutations at a time
# Each mutation first runs the tests that caught it in the last run's
# output (docs/mutation-run.txt, -hints), and the whole package only when
# they pass: a bug is missed only when every test of its package passes.
# Keep the output of a full run on main there:
#   nice -n 10 scripts/mutate.sh -j 2 2>&1 | tee /tmp/run.txt
# The farm's tests need PostgreSQL: without PHONEPILOT_TEST_POSTGRES a
# throwaway cluster is started (scripts/pg-start.sh) and stopped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${PHONEPILOT_TEST_POSTGRES:-}" ] && [[ " $* " != *" -check "* ]]; then
	export PHONEPILOT_PG_DIR=${PHONEPILOT_PG_DIR:-$(mktemp -d /tmp/phonepilot-mutate-pg.XXXXXX)}
	eval "$(./scripts/pg-start.sh)"
	trap './scripts/pg-start.sh stop' EXIT
fi
export PHONEPILOT_TEST_POSTGRES
go run ./internal/mutate "$@"
