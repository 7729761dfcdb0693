#!/bin/sh
# compare.sh: the same fixture (tests/arch/arch_fixture.c) built at -O0
# for x86-64 (build/) and aarch64 (build-aarch64/, run under qemu through
# binfmt_misc), each case's report compared function for function and
# line for line (issue 27). What is compared: the headline's signal, and
# every frame line that has a file:line (the fixture's own frames: libc's
# are named by each architecture's own glibc, and differ in what is
# inlined there); the frame numbers and addresses are not. Run by make
# test-aarch64. Prints "ok - CASE" / "not ok - CASE" with both lists, and
# exits 1 if any case differs.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/execinfo_ex_arch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export QEMU_LD_PREFIX="$root/build-aarch64/sysroot" QEMU_CPU=max

# Relative source paths in the debug information, the same on both.
build() { # CC BUILD OUTPUT
    $1 -O0 -g -Iinclude tests/arch/arch_fixture.c -o "$3" -L"$2" -lexecinfo_ex \
        -Wl,-rpath,"$root/$2" || exit 1
}
build cc build "$tmp/x86_64"
build aarch64-linux-gnu-gcc build-aarch64 "$tmp/aarch64"

# The report's comparable part: "signal NAME", then "FUNCTION at FILE:LINE".
facts() { # PROGRAM CASE
    EXECINFO_EX_OPTIONS=handler=1 timeout 120 "$1" "$2" 2>&1 | awk '
        /^\*\*\* execinfo_ex: fatal signal/ { match($0, /\(SIG[A-Z0-9]+\)/);
            print "signal " substr($0, RSTART + 1, RLENGTH - 2) }
        / at [^ ]+:[0-9]+$/ { name = $0; sub(/^[^(]*\(/, "", name); sub(/[+)].*/, "", name);
            file = $0; sub(/.* at /, "", file); print name " at " file }'
}

failed=0
for case in leaf call handler abort trace; do
    facts "$tmp/x86_64" $case > "$tmp/x86_64.$case"
    facts "$tmp/aarch64" $case > "$tmp/aarch64.$case"
    if [ -s "$tmp/x86_64.$case" ] && cmp -s "$tmp/x86_64.$case" "$tmp/aarch64.$case"; then
        echo "ok - $case ($(grep -c ' at ' "$tmp/x86_64.$case") frames with lines)"
    else
        echo "not ok - $case"
        echo "# x86_64:"; sed 's/^/#   /' "$tmp/x86_64.$case"
        echo "# aarch64:"; sed 's/^/#   /' "$tmp/aarch64.$case"
        failed=1
    fi
done
exit $failed
