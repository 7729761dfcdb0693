#!/bin/sh
# tools/loader_knows.sh DIR [LDCONFIG]: exit 0 if ldconfig puts DIR's
# libraries into the loader's cache (DIR is in /etc/ld.so.conf, its
# includes, or a trusted directory), 1 if not. Asked of ldconfig itself,
# which prints "DIR: (from FILE:LINE)" for each directory it scans
# (-N: no cache written, -X: no links made: it changes nothing). A
# directory it lists under another name (/lib for /usr/lib on a merged
# /usr) is the same directory (test -ef).
# Used by `make install` and `make uninstall` (issue 13).
dir=$1
ldconfig=${2:-/sbin/ldconfig}
[ -d "$dir" ] || exit 1
"$ldconfig" -v -N -X 2>/dev/null | sed -n 's|^\(/[^:]*\):.*|\1|p' | {
    while IFS= read -r scanned; do
        [ "$scanned" -ef "$dir" ] && exit 0
    done
    exit 1
}
