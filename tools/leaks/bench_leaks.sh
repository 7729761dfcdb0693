#!/bin/sh
# bench_leaks.sh: time execinfo_ex_leaks on generated traces of EVENTS
# events (default 1,000,000): one with the caller only, one with an
# 8-frame "# stack" line after each allocation.
#   sh tools/leaks/bench_leaks.sh [EVENTS] [TOOL]
set -eu
events=${1:-1000000}
tool=${2:-build/bin/execinfo_ex_leaks}
work=${TMPDIR:-/tmp}/execinfo_ex_leaks_bench_$$
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

# generate EVENTS STACKS OUT: about half allocations, the rest frees and
# realloc pairs; a leak every 50 allocations; 500 call sites in 2 modules.
generate() {
    python3 - "$1" "$2" "$3" <<'PY'
import random, sys
events, stacks, out = int(sys.argv[1]), sys.argv[2] == "1", sys.argv[3]
random.seed(1)
mods = ["/usr/bin/prog", "/usr/lib/x86_64-linux-gnu/libfoo.so.1"]
sites = ["%s:[0x%x]" % (mods[i % 2], 0x1000 + 16 * i) for i in range(500)]
live, next_ptr, n, lines = [], 0x55d0c1a2b000, 0, ["= Start"]
while n < events:
    r = random.random()
    if live and r < 0.45:
        p = live.pop(random.randrange(len(live)))
        lines.append("@ %s - 0x%x" % (random.choice(sites), p)); n += 1
        continue
    where = random.choice(sites)
    if live and r < 0.55:
        p = live.pop(random.randrange(len(live)))
        lines.append("@ %s < 0x%x" % (where, p)); n += 1
        op = ">"
    else:
        op = "+"
    next_ptr += 0x40
    lines.append("@ %s %s 0x%x 0x%x" % (where, op, next_ptr, random.randrange(1, 4096))); n += 1
    if stacks:
        lines.append("# stack " + " ".join([where] + random.sample(sites, 7)))
    if random.random() >= 0.02:
        live.append(next_ptr)
lines.append("= End")
open(out, "w").write("\n".join(lines) + "\n")
PY
}

for stacks in 0 1; do
    generate "$events" $stacks "$work/trace"
    size=$(wc -c <"$work/trace")
    start=$(date +%s.%N)
    status=0
    "$tool" --no-progress "$work/trace" >"$work/report" 2>"$work/errors" || status=$?
    end=$(date +%s.%N)
    echo "$events events, stack lines: $stacks, $size bytes: $(awk "BEGIN { print $end - $start }") s," \
        "exit $status: $(tail -n 1 "$work/report")"
done
