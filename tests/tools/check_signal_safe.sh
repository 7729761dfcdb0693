#!/bin/sh
# The signal-safe world references nothing outside itself but the
# allowlist: no malloc, stdio, snprintf, mutex, dl* (but _dl_find_object),
# libelf or libdw. Usage: check_signal_safe.sh OBJECT...
set -eu
allowlist="$(dirname "$0")/signal_safe_allowlist.txt"
defined=$(nm --defined-only "$@" | awk 'NF == 3 { print $3 }' | sort -u)
allowed=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$allowlist" | sort -u)
failed=0
checked=0
for object in "$@"; do
    checked=$((checked + 1))
    for symbol in $(nm -u "$object" | awk '{ print $2 }'); do
        if printf '%s\n' "$defined" | grep -qx "$symbol"; then continue; fi
        if printf '%s\n' "$allowed" | grep -qx "$symbol"; then continue; fi
        echo "not ok - $object references $symbol, which is not signal-safe (not on $allowlist)"
        failed=$((failed + 1))
    done
done
if [ "$checked" -eq 0 ]; then
    echo "check_signal_safe: no object given"; exit 2
fi
echo "signal-safe check: $checked objects, $failed forbidden references"
[ "$failed" -eq 0 ]
