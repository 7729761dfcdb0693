#!/bin/sh
# readme.sh: README.md's `sh-aarch64` block, as written (issue 27), run by
# make test-aarch64. As tests/readme/run.sh does for the native blocks:
# the apt-get line is not run (it installs packages as root; .ci/run has
# installed them), /opt/x-aarch64 becomes a fresh prefix, `make` and
# `sh tools/...` lines run in the source tree and the others in a scratch
# directory where prog.c
# is examples/print_trace.c (there a `make` inside the line, as in
# "$(make -s ... qemu-prefix)", is the source tree's: make -C). The block passes when every line succeeds and
# the last, ./prog under qemu, prints a trace naming dummy_function and
# main (built without -rdynamic, as the native README's check).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/execinfo_ex_readme_aarch64.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/scratch"
cp "$root/examples/print_trace.c" "$tmp/scratch/prog.c"
awk '/^```sh-aarch64/ { take = 1; next } /^```/ { take = 0 } take' "$root/README.md" \
    > "$tmp/block"
[ -s "$tmp/block" ] || { echo "not ok - README.md has no sh-aarch64 block"; exit 1; }
status=0
while IFS= read -r line; do
    case $line in
        "apt-get "*) echo "# not run (installs packages): $line"; continue ;;
    esac
    line=$(printf '%s\n' "$line" | sed "s|/opt/x-aarch64|$tmp/prefix|g")
    case $line in make* | "sh tools/"*) where=$root ;; *) where=$tmp/scratch ;; esac
    if ! (cd "$where" && sh -c "make() { command make -C '$root' \"\$@\"; }; $line") \
        > "$tmp/out" 2>&1; then
        echo "not ok - README.md sh-aarch64: $line"; sed 's/^/#   /' "$tmp/out" | tail -20
        status=1
        break
    fi
done < "$tmp/block"
if [ $status = 0 ]; then
    if grep -q '(dummy_function+' "$tmp/out" && grep -q '(main+' "$tmp/out"; then
        echo "ok - README.md sh-aarch64 block: ./prog under qemu names dummy_function and main"
    else
        echo "not ok - README.md sh-aarch64 block: ./prog's trace lacks dummy_function or main"
        sed 's/^/#   /' "$tmp/out"
        status=1
    fi
fi
exit $status
