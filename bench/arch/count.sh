#!/bin/sh
# count.sh: instructions per warm capture and per malloc+free, on x86-64
# (valgrind --tool=callgrind, its Ir) and on aarch64 (qemu-aarch64
# -singlestep -d exec,nochain, 7.2's name for -one-insn-per-tb: one log
# line per executed instruction), from the same source
# (bench/arch/count_loop.c, -O2), each
# the difference of a run of N+10000 and a run of N calls over 10000
# (docs/PERFORMANCE.md, issue 27). qemu's timings mean nothing; its
# instruction counts are the program's own, as on hardware (the kernel's
# and the vDSO's are in neither count). Needs both builds (make, make
# CROSS_COMPILE=aarch64-linux-gnu-) and the aarch64 sysroot.
set -eu
# No index cache: every run builds its index the same way.
export EXECINFO_EX_OPTIONS=index_cache=0
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${TMPDIR:-/tmp}/execinfo_ex_count.$$
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT
base=10
more=10010

build() { # CC BUILD OUTPUT [FLAGS]
    $1 -O2 -g -I"$root/include" "$root/bench/arch/count_loop.c" -o "$3" \
        -L"$root/$2" -lexecinfo_ex -lexecinfo_ex_hooks -Wl,-rpath,"$root/$2" ${4:-}
}
build cc build "$out/x86_64"
sysroot=$root/build-aarch64/sysroot
build aarch64-linux-gnu-gcc build-aarch64 "$out/aarch64" \
    "-Wl,-rpath-link,$sysroot/usr/lib/aarch64-linux-gnu:$sysroot/lib/aarch64-linux-gnu"

x86_count() { # KIND N
    valgrind --tool=callgrind --callgrind-out-file="$out/cg" "$out/x86_64" "$1" "$2" \
        > /dev/null 2>&1
    sed -n 's/^summary: *//p' "$out/cg"
}
aarch64_count() { # KIND N
    rm -f "$out/fifo"; mkfifo "$out/fifo"
    wc -l < "$out/fifo" > "$out/lines" &
    QEMU_LD_PREFIX="$root/build-aarch64/sysroot" qemu-aarch64 -cpu max \
        -singlestep -d exec,nochain -D "$out/fifo" "$out/aarch64" "$1" "$2" > /dev/null
    wait
    # -d exec writes one "Trace" line per block run: one instruction each.
    cat "$out/lines"
}

for kind in capture heap; do
    x1=$(x86_count $kind $base); x2=$(x86_count $kind $more)
    a1=$(aarch64_count $kind $base); a2=$(aarch64_count $kind $more)
    echo "$kind: x86_64 $(( (x2 - x1) / (more - base) )) aarch64 $(( (a2 - a1) / (more - base) )) instructions per call"
done
