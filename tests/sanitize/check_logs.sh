#!/bin/sh
# check_logs.sh LOGDIR: the verdict of make test-asan or make test-valgrind
# (tests/sanitize/sanitize.mk), from what the run left in LOGDIR:
#   NAME.status    the exit status of each test binary (or tool run)
#   NAME.out       its stdout and stderr
#   asan.PID       a report of AddressSanitizer or LeakSanitizer, from any
#                  process of the run (ASAN_OPTIONS=log_path): forked
#                  children, programs the tests ran, the tool
#   vg.PID         valgrind's log of every process it ran
# UBSan (as ASan's companion, gcc) ignores log_path: its reports go to
# stderr, and end the process with UBSAN_OPTIONS's exitcode; the .out files
# are searched for them, and a child's status is checked by its test.
# Fails if any binary failed or any process reported anything.
set -u
dir=$1
failed=0

for status_file in "$dir"/*.status; do
    [ -e "$status_file" ] || continue
    status=$(cat "$status_file")
    if [ "$status" != 0 ]; then
        echo "FAIL: $(basename "$status_file" .status) exited with status $status"
        failed=1
    fi
done

for out in "$dir"/*.out; do
    [ -e "$out" ] || continue
    if grep -q -E 'runtime error:|ERROR: (AddressSanitizer|LeakSanitizer)|Sanitizer: CHECK failed' "$out"; then
        echo "FAIL: a sanitizer report in $out:"
        grep -E -A20 'runtime error:|ERROR: (AddressSanitizer|LeakSanitizer)|Sanitizer: CHECK failed' "$out" | head -60
        failed=1
    fi
done

for report in "$dir"/asan.*; do
    [ -e "$report" ] || continue
    echo "FAIL: sanitizer report $report:"
    head -60 "$report"
    failed=1
done

checked=0
for log in "$dir"/vg.*; do
    [ -e "$log" ] || continue
    checked=$((checked + 1))
    # A process that exec'd a program valgrind does not follow, or that
    # died by a signal, has no summary: then any error text counts.
    if grep -q -E 'ERROR SUMMARY: [1-9]' "$log" ||
       { ! grep -q 'ERROR SUMMARY: 0 errors' "$log" &&
         grep -q -E 'Invalid |uninitialised|Uninitialised|definitely lost in|Process terminating|Mismatched|overlap' "$log"; }; then
        echo "FAIL: valgrind errors in $log ($(grep -m1 'Command:' "$log" | sed 's/^==[0-9]*== //')):"
        grep -v -E '^==[0-9]+== *$' "$log" | head -80
        failed=1
    fi
done
[ "$checked" -gt 0 ] && echo "valgrind: $checked process logs checked"

if [ "$failed" != 0 ]; then
    echo "FAIL: see $dir"
    exit 1
fi
echo "OK: no sanitizer or valgrind error ($dir)"
