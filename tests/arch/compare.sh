#!/bin/sh
# compare.sh: the same fixture (tests/arch/arch_fixture.c) built at -O0
# for x86-64 (build/) and aarch64 (build-aarch64/, run under qemu through
# binfmt_misc), each case's report compared function for function and
# line for line (issue 27); and built for aarch64 again with
# -mbranch-protection=pac-ret (run with qemu's -cpu max, so the return
# addresses are signed), compared the same way. What is compared: the
# headline's signal, and
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
build() { # CC BUILD OUTPUT [FLAGS]
    $1 -O0 -g ${4:-} -Iinclude tests/arch/arch_fixture.c -o "$3" -L"$2" -lexecinfo_ex \
        -Wl,-rpath,"$root/$2" || exit 1
}
build cc build "$tmp/x86_64"
build aarch64-linux-gnu-gcc build-aarch64 "$tmp/aarch64"
build aarch64-linux-gnu-gcc build-aarch64 "$tmp/aarch64-pac" -mbranch-protection=pac-ret
if aarch64-linux-gnu-objdump -d "$tmp/aarch64-pac" | grep -q paciasp; then
    echo "ok - the pac-ret build signs its return addresses (paciasp)"
else
    echo "not ok - the pac-ret build has no paciasp"; exit 1
fi

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
    for arch in aarch64 aarch64-pac; do
        facts "$tmp/$arch" $case > "$tmp/$arch.$case"
        if [ -s "$tmp/x86_64.$case" ] && cmp -s "$tmp/x86_64.$case" "$tmp/$arch.$case"; then
            echo "ok - $case, $arch ($(grep -c ' at ' "$tmp/x86_64.$case") frames with lines)"
        else
            echo "not ok - $case, $arch"
            echo "# x86_64:"; sed 's/^/#   /' "$tmp/x86_64.$case"
            echo "# $arch:"; sed 's/^/#   /' "$tmp/$arch.$case"
            failed=1
        fi
    done
done
exit $failed
