#!/bin/sh
# tests/fuzz/check_run_fuzzers.sh [RUNNER]: make fuzz's runner
# (tests/fuzz/run_fuzzers.sh) against stub fuzzers, one per way a fuzzer
# can fail: each must fail the run, and a fuzzer that finishes cleanly must
# pass it. Part of make test-checks (no clang needed).
set -u
runner=${1:-tests/fuzz/run_fuzzers.sh}
work=$(mktemp -d /tmp/check_run_fuzzers.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/seeds"

# stub NAME BODY: a fuzzer that runs the shell BODY ($prefix: its
# -artifact_prefix).
stub() {
    cat > "$work/fuzz_$1" <<STUB
#!/bin/sh
prefix=
for argument in "\$@"; do
    case \$argument in -artifact_prefix=*) prefix=\${argument#-artifact_prefix=} ;; esac
done
$2
STUB
    chmod +x "$work/fuzz_$1"
    mkdir -p "$work/seeds/$1"
}

done_line='echo "Done 1000 runs in 1 second(s)"'
stub clean "$done_line; exit 0"
stub killed 'echo "INFO: Seed: 1"; kill -KILL $$'
stub exits "echo 'INFO: Seed: 1'; exit 1"
stub timeout_status "$done_line; exit 70"
stub artifact "echo x > \"\${prefix}oom-1234\"; $done_line; exit 0"
stub never_fuzzed 'echo "INFO: Seed: 1"; exit 0'

failures=0
expect() { # expect STATUS TARGET
    sh "$runner" "$work" 1 "$2" > "$work/out" 2>&1
    status=$?
    if { [ "$1" = pass ] && [ $status -ne 0 ]; } || { [ "$1" = fail ] && [ $status -eq 0 ]; }; then
        echo "check_run_fuzzers: fuzz_$2 should $1 the run (status $status):"
        cat "$work/out"
        failures=$((failures + 1))
    fi
    rm -f "$work"/crash-*
}
expect pass clean
for target in killed exits timeout_status artifact never_fuzzed; do
    expect fail "$target"
done
# One failing target among clean ones fails the whole run (a crash file
# of any target but the last was once ignored: "! ls" is exempt from set -e).
for target in killed artifact; do
    if sh "$runner" "$work" 1 clean "$target" clean > "$work/out" 2>&1; then
        echo "check_run_fuzzers: fuzz_$target among clean ones passed the run:"
        cat "$work/out"
        failures=$((failures + 1))
    fi
    rm -f "$work"/crash-*
done
[ $failures -eq 0 ] && echo "check_run_fuzzers: the runner fails each of 5 failing fuzzers, passes a clean one"
exit $((failures > 0))
