#!/bin/sh
# tests/readme/run.sh: run the command blocks of README.md as written, so
# that the README cannot drift from what works (issue 13). Run by
# `make test-readme` (part of `make test`) from the repo root.
#
# Which blocks: fenced blocks tagged `sh` or untagged, and indented
# (4-space) blocks after a blank line; the `c` block and others are code,
# not commands. Each is taken from README.md at run time, never copied.
# How: all in one `sh` (so the install block's `export` reaches the later
# blocks), each with `set -e`, from `env -i` with a plain PATH. Blocks
# whose first command is `make` run in the source tree; the others in a
# scratch directory where `prog.c` is examples/print_trace.c and
# `./program` is tests/readme/program.c (a correct program that calls
# mtrace()): the README's names for "your source" and "any program".
# The one substitution: /opt/x, the README's example prefix, becomes a
# fresh temporary prefix. Three commands are not run as they are, each
# said with its reason: the apt-get part of the first (installs packages as
# root: CI's .ci/run has installed them; the `make demo` after it runs),
# `make test` (this test is part of it) and the plain `make install`
# (it would install into /usr/local; the /opt/x block is the same install
# into the fresh prefix); the rules apply line by line, and a block left
# empty is not run. Afterwards, the programs the README built are
# checked: ./prog runs with no LD_LIBRARY_PATH, ./prog_static needs no
# libexecinfo_ex.so; and ./program says what was loaded into it: a block
# that names execinfo_ex_run or handler=1 must give it the fatal handler,
# one that names execinfo_ex_heap or libexecinfo_ex_hooks the heap layer,
# and no block may print ld.so's "cannot be preloaded" (a preload that did
# nothing) or a warning of the library.
#
# Prints "ok - ..." / "not ok - ...", then "readme: N passed, M failed";
# exits 1 when M > 0. KEEP_TMP=1 keeps the temp dir; README=FILE reads
# another file (to see what an older README.md did).
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/execinfo_ex_readme.XXXXXX")
cleanup() {
    if [ "${KEEP_TMP:-0}" = 1 ]; then echo "# kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
prefix=$tmp/prefix
scratch=$tmp/scratch
blocks=$tmp/blocks
mkdir -p "$scratch" "$blocks" "$tmp/home"

passed=0
failed=0
ok() {
    passed=$((passed + 1))
    echo "ok - $1"
}
not_ok() {
    failed=$((failed + 1))
    echo "not ok - $1"
    shift
    for line in "$@"; do echo "#   $line"; done
}
show() {
    if [ -s "$1" ]; then
        echo "#   --- $(basename "$1"):"
        tail -n "${2:-30}" "$1" | sed 's/^/#   | /'
    fi
}

# ---- the blocks, from README.md: blocks/N.sh, and "N LINE" in blocks/index ----
awk -v dir="$blocks" '
function start() { n++; file = dir "/" n ".sh"; print n, NR > (dir "/index") }
fence {
    if ($0 ~ /^```[ \t]*$/) { fence = 0; if (take) close(file); blank = 0; next }
    if (take) print > file
    next
}
indented {
    if ($0 ~ /^    /) { print substr($0, 5) > file; next }
    indented = 0; close(file)
}
/^```/ {
    info = substr($0, 4); gsub(/[ \t]/, "", info)
    fence = 1; take = (info == "" || info == "sh")
    if (take) start()
    next
}
/^    [^ ]/ && blank { indented = 1; start(); print substr($0, 5) > file; next }
{ blank = ($0 ~ /^[ \t]*$/) }
BEGIN { blank = 1 }
' "${README:-README.md}"
count=$(wc -l <"$blocks/index")
if [ "$count" -ge 9 ]; then
    ok "README.md has $count command blocks"
else
    not_ok "README.md has $count command blocks (9 or more expected: the extraction is broken)"
fi

# ---- the placeholders --------------------------------------------------------------
cp examples/print_trace.c "$scratch/prog.c"
if ${CC:-cc} -O0 -g tests/readme/program.c -o "$scratch/program" >"$tmp/program.build" 2>&1; then
    ok "the README's ./program built from tests/readme/program.c"
else
    not_ok "the README's ./program built from tests/readme/program.c"
    show "$tmp/program.build"
fi

# ---- the driver: one shell, each block sourced with set -e ---------------------------
driver=$tmp/driver.sh
echo 'set -e' >"$driver"
installs=0
# rewrite FILE LABEL: the block as it is run, on stdout; each change said
# on stderr. Line by line: the rules above.
rewrite() {
    while IFS= read -r text; do
        case $text in
            "apt-get "*" && "*)
                echo "# $2: the apt-get part is not run (it installs packages as root; CI's .ci/run has installed them); running: ${text##*&& }" >&2
                printf '%s\n' "${text##*&& }"
                ;;
            "make test")
                echo "# $2: 'make test' is not run (this test is part of it: it would recurse)" >&2
                ;;
            "make install")
                echo "# $2: 'make install' is not run (it installs into /usr/local; the PREFIX=/opt/x block is the same install into a fresh prefix)" >&2
                ;;
            *"/opt/x"*)
                echo "# $2: /opt/x becomes the fresh prefix <tmp>/prefix in: $text" >&2
                printf '%s\n' "$text" | sed "s|/opt/x|$prefix|g"
                ;;
            *) printf '%s\n' "$text" ;;
        esac
    done <"$1"
}
while read -r number line; do
    label="block $number (README.md line $line)"
    rewrite "$blocks/$number.sh" "$label" >"$blocks/$number.run" 2>"$blocks/$number.notes"
    cat "$blocks/$number.notes"
    if grep -q '/opt/x becomes' "$blocks/$number.notes"; then
        installs=$((installs + 1))
    fi
    if [ ! -s "$blocks/$number.run" ]; then
        echo "skipped" >"$blocks/$number.skip"
        continue
    fi
    case $(head -n 1 "$blocks/$number.run") in
        make*) where=$root ;;
        *) where=$scratch ;;
    esac
    {
        echo "echo '== start $number'"
        echo "cd '$where'"
        echo ". '$blocks/$number.run' >'$blocks/$number.log' 2>&1"
        echo "echo '== done $number'"
    } >>"$driver"
done <"$blocks/index"
if [ "$installs" -ge 1 ]; then
    ok "a block installs into the example prefix /opt/x (run in a fresh prefix)"
else
    not_ok "a block installs into the example prefix /opt/x (run in a fresh prefix)" \
        "without it the later blocks find nothing installed"
fi

status=0
(cd "$scratch" && env -i PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin \
    HOME="$tmp/home" LANG=C.UTF-8 TMPDIR="$tmp" timeout 120 sh "$driver") >"$tmp/driver.out" 2>&1 ||
    status=$?

# wants BLOCK LOG WHAT SAYS: when BLOCK names WHAT (a grep pattern) and
# runs ./program, every "program:" line in LOG says SAYS, and there is one
# at least (a block may run another program, such as sleep, instead).
wants() {
    grep -q "$3" "$1" && grep -q '\./program' "$1" || return 0
    grep -q '^program: ' "$2" && ! grep '^program: ' "$2" | grep -vq "$4"
}
while read -r number line; do
    label="README.md block $number (line $line): $(head -n 1 "$blocks/$number.sh")"
    if [ -e "$blocks/$number.skip" ]; then
        continue
    elif grep -q 'cannot be preloaded\|^execinfo_ex: ' "$blocks/$number.log"; then
        not_ok "$label" "a warning of ld.so or of the library:"
        show "$blocks/$number.log"
    elif ! wants "$blocks/$number.sh" "$blocks/$number.log" 'execinfo_ex_run\|handler=1' 'fatal handler: yes'; then
        not_ok "$label" "it runs ./program, but not with the fatal handler installed:"
        show "$blocks/$number.log"
    elif ! wants "$blocks/$number.sh" "$blocks/$number.log" 'execinfo_ex_heap\|libexecinfo_ex_hooks' 'heap layer: yes'; then
        not_ok "$label" "it runs ./program, but not with the heap layer loaded:"
        show "$blocks/$number.log"
    elif grep -qx "== done $number" "$tmp/driver.out"; then
        ok "$label"
    elif grep -qx "== start $number" "$tmp/driver.out"; then
        not_ok "$label" "failed (the driver stopped with status $status); its output:"
        show "$blocks/$number.log"
    else
        not_ok "$label" "not run: an earlier block failed"
    fi
done <"$blocks/index"

# ---- what the README built ---------------------------------------------------------------
if [ -x "$scratch/prog" ] && readelf -d "$scratch/prog" | grep -q "R.*PATH.*\[$prefix/lib\]" &&
    env -u LD_LIBRARY_PATH "$scratch/prog" >"$tmp/prog.out" 2>&1; then
    ok "the README's cc line: ./prog has the prefix's libdir as its rpath and runs with no LD_LIBRARY_PATH"
else
    not_ok "the README's cc line: ./prog has the prefix's libdir as its rpath and runs with no LD_LIBRARY_PATH"
    show "$tmp/prog.out"
fi
if [ -x "$scratch/prog_static" ] && ! readelf -d "$scratch/prog_static" | grep -q 'NEEDED.*libexecinfo_ex' &&
    [ -e "$prefix/lib/libexecinfo_ex.so" ]; then
    ok "the README's static line: ./prog_static needs no libexecinfo_ex.so (which is in the prefix)"
else
    not_ok "the README's static line: ./prog_static needs no libexecinfo_ex.so (which is in the prefix)" \
        "$(readelf -d "$scratch/prog_static" 2>&1 | grep NEEDED | tr '\n' ' ')"
fi
if grep -q '^= Start' "$scratch/trace" 2>/dev/null; then
    ok "the README's leak example: execinfo_ex_heap wrote ./trace, which execinfo_ex_leaks read"
else
    not_ok "the README's leak example: execinfo_ex_heap wrote ./trace, which execinfo_ex_leaks read"
fi

echo "readme: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
