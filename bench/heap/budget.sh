#!/bin/sh
# budget.sh: the per-call budget of the hooks library's malloc and free
# (issue 14), in instructions, which a loaded machine does not change.
#
# Runs bench/heap/pool.c's steady state (the replacements only: pool.c
# zeroes callgrind's counters before them and dumps them after) under
# valgrind --tool=callgrind with the hooks library preloaded, then
# bench/heap/budget_report.py prints Ir per malloc and per free split by
# part (entry, walk, depot, block set, guards and fill, quarantine,
# eviction, glibc), and the inclusive Ir per call of the main functions.
# docs/PERFORMANCE.md says how to read it.
#
# Run from the top of the tree after `make all build/bench/heap/pool`, or
# `make bench-budget`. Environment:
#   BUDGET_OPS      replacements profiled (default 100000; callgrind runs
#                   the pool at about 1/50 of its speed)
#   BUDGET_LIVE     live blocks (default 10000)
#   BUDGET_OPTIONS  EXECINFO_EX_OPTIONS for the run (default: unset, the defaults)
#   BUDGET_HOOKS    the hooks library (default build/libexecinfo_ex_hooks.so),
#                   e.g. another build's, for a before/after
#   BUDGET_KEEP     a path to keep the callgrind profile at (for
#                   callgrind_annotate or kcachegrind)
set -eu

build=${BUILD:-build}
hooks=${BUDGET_HOOKS:-$build/libexecinfo_ex_hooks.so}
pool=$build/bench/heap/pool
ops=${BUDGET_OPS:-100000}
live=${BUDGET_LIVE:-10000}
here=$(dirname "$0")

for need in "$hooks" "$pool"; do
    [ -e "$need" ] || { echo "budget.sh: $need is missing (make all $pool)" >&2; exit 1; }
done
command -v valgrind >/dev/null || { echo "budget.sh: valgrind is not installed" >&2; exit 1; }

scratch=$(mktemp -d "${TMPDIR:-/tmp}/budget.XXXXXX")
trap 'rm -rf "$scratch"' EXIT INT TERM

# The hooks library needs a path valgrind's preload does not shadow;
# callgrind itself replaces no allocator, so ours is the one the pool sees.
case $hooks in /*) ;; *) hooks=$(pwd)/$hooks ;; esac
if [ -n "${BUDGET_OPTIONS:-}" ]; then
    EXECINFO_EX_OPTIONS=$BUDGET_OPTIONS
    export EXECINFO_EX_OPTIONS
else
    unset EXECINFO_EX_OPTIONS 2>/dev/null || true
fi

echo "== budget: pool $ops replacements of $live live blocks under callgrind"
echo "   hooks: $hooks"
echo "   EXECINFO_EX_OPTIONS=${EXECINFO_EX_OPTIONS:-(unset: the defaults)}"
LD_PRELOAD=$hooks valgrind --tool=callgrind --separate-callers=8 \
    --callgrind-out-file="$scratch/callgrind.out" "$pool" "$ops" "$live" 2>"$scratch/valgrind.log" ||
    { cat "$scratch/valgrind.log" >&2; exit 1; }
# The dump pool.c asked for (the whole run's is the other file).
profile=$(grep -l 'Trigger: Client Request: pool replacements' "$scratch"/callgrind.out* | head -1)
[ -n "$profile" ] || { echo "budget.sh: no dump of the replacements (pool.c built without valgrind/callgrind.h?)" >&2; exit 1; }
grep -E '^summary:' "$profile" | sed 's/^summary:/   instructions in the replacements:/'
python3 "$here/budget_report.py" "$profile" libexecinfo_ex_hooks
if [ -n "${BUDGET_KEEP:-}" ]; then
    cp "$profile" "$BUDGET_KEEP"
    echo "profile kept in $BUDGET_KEEP"
fi
