#!/bin/sh
# tests/fuzz/run_fuzzers.sh DIR SECONDS TARGET...: make fuzz's runner. Runs
# DIR/fuzz_TARGET for SECONDS over DIR/corpus/TARGET, DIR/seeds/TARGET and
# tests/fuzz/regressions/TARGET (when present), from the checkout. A target
# fails if its fuzzer exits with any status but 0 (a crash, a leak, an
# undefined operation, a timeout, running out of memory, an exit inside the
# target, a death by a signal that left nothing behind), if it leaves an
# artifact (DIR/crash-TARGET-*: crash-, leak-, timeout-, oom-), or if it
# does not end with libFuzzer's "Done N runs" (it never fuzzed). Every
# target is run; the status is 1 if any failed. Its log is DIR/fuzz_TARGET.log.
# tests/fuzz/check_run_fuzzers.sh checks this script with stub fuzzers.
set -u
dir=$1
seconds=$2
shift 2
failed=
for target in "$@"; do
    echo "== fuzz_$target for $seconds s"
    mkdir -p "$dir/corpus/$target"
    log=$dir/fuzz_$target.log
    regressions=
    [ -d "tests/fuzz/regressions/$target" ] && regressions=tests/fuzz/regressions/$target
    status=0
    "$dir/fuzz_$target" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
        -artifact_prefix="$dir/crash-$target-" "$dir/corpus/$target" "$dir/seeds/$target" \
        $regressions > "$log" 2>&1 || status=$?
    grep -E '^stat::number_of_executed_units|^stat::peak_rss|ERROR|SUMMARY' "$log"
    why=
    [ "$status" -eq 0 ] || why="exit status $status"
    for artifact in "$dir/crash-$target-"*; do
        [ -e "$artifact" ] && why="${why:+$why; }left $artifact" && break
    done
    grep -q '^Done [0-9][0-9]* runs' "$log" || why="${why:+$why; }no \"Done N runs\" line"
    if [ -n "$why" ]; then
        echo "fuzz_$target FAILED: $why. The end of $log:"
        tail -n 20 "$log"
        failed="$failed $target"
    fi
done
if [ -n "$failed" ]; then
    echo "make fuzz: failed:$failed"
    exit 1
fi
