#!/bin/sh
# get_breakpad_tools.sh DIR: Breakpad's prebuilt linux-x64 minidump_stackwalk,
# minidump_dump and dump_syms into DIR (default build/breakpad), from the npm
# package minidump 0.26.0 (electron/node-minidump), fetched with `npm pack`
# and unpacked: its install script wants yarn, so it is never installed.
# The judge of tests/unit/test_minidump.c. Idempotent; fails loudly.
set -eu
DIR=${1:-build/breakpad}
PACKAGE=minidump@0.26.0
TOOLS="minidump_stackwalk minidump_dump dump_syms"

have_all() {
    for tool in $TOOLS; do
        [ -x "$DIR/$tool" ] || return 1
    done
    "$DIR/minidump_stackwalk" 2>&1 | grep -q 'Usage: minidump_stackwalk' || return 1
}

if have_all; then
    exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "get_breakpad_tools.sh: npm is not installed: cannot fetch $PACKAGE" >&2
    exit 1
fi
mkdir -p "$DIR"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/breakpad_tools.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
if ! (cd "$WORK" && npm pack --silent "$PACKAGE" >pack.log 2>&1); then
    echo "get_breakpad_tools.sh: npm pack $PACKAGE failed:" >&2
    cat "$WORK/pack.log" >&2
    exit 1
fi
tar xzf "$WORK"/minidump-*.tgz -C "$WORK"
for tool in $TOOLS; do
    if [ ! -f "$WORK/package/bin/linux-x64/$tool" ]; then
        echo "get_breakpad_tools.sh: $PACKAGE has no bin/linux-x64/$tool" >&2
        exit 1
    fi
    cp "$WORK/package/bin/linux-x64/$tool" "$DIR/$tool.new"
    chmod 755 "$DIR/$tool.new"
    mv "$DIR/$tool.new" "$DIR/$tool"
done
if ! have_all; then
    echo "get_breakpad_tools.sh: the tools in $DIR do not run" >&2
    exit 1
fi
echo "get_breakpad_tools.sh: $TOOLS from $PACKAGE in $DIR"
