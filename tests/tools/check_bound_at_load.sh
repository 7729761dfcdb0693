#!/bin/sh
# The libraries bind their imports lazily, but never those of the
# signal-safe world: a handler's first call through the PLT would run the
# loader's resolver in a process that may have crashed inside the loader,
# on the small alternate stack. The signal-safe objects are compiled
# -fno-plt, so they call through GOT entries that the loader binds at load
# (GLOB_DAT), lazy or not. This checks both ends:
#   - no signal-safe object has a PLT call relocation (x86-64's PLT32,
#     aarch64's CALL26 and JUMP26) against a symbol that LIBRARY binds
#     dynamically (an import, or one of its exported functions);
#   - every such symbol has a GLOB_DAT relocation in LIBRARY.
# Usage: check_bound_at_load.sh LIBRARY OBJECT...
set -eu
library=$1
shift
readelf=${READELF:-readelf}
nm=${NM:-nm}
dynamic=$("$readelf" -rW "$library" | awk '$3 ~ /GLOB_DAT|JUMP_SLOT/ { sub(/@.*/, "", $5); print $3, $5 }')
failed=0
checked=0
for object in "$@"; do
    checked=$((checked + 1))
    calls=$("$readelf" -rW "$object" | awk '$3 ~ /PLT32|CALL26|JUMP26/ { print $5 }' | sort -u)
    # Only what the library binds dynamically: a hidden function of ours,
    # or libgcc's (aarch64's outline atomics), is called directly.
    for symbol in $("$nm" -u "$object" | awk '{ print $2 }' | sort -u); do
        printf '%s\n' "$dynamic" | grep -q " $symbol\$" || continue
        if printf '%s\n' "$calls" | grep -qx "$symbol"; then
            echo "not ok - $object calls $symbol through the PLT (compile it -fno-plt)"
            failed=$((failed + 1))
        elif ! printf '%s\n' "$dynamic" | grep -q "GLOB_DAT $symbol\$"; then
            echo "not ok - $library binds $symbol (called by $object) lazily only"
            failed=$((failed + 1))
        fi
    done
done
if [ "$checked" -eq 0 ]; then
    echo "check_bound_at_load: no object given"; exit 2
fi
echo "bound-at-load check: $checked objects, $failed lazily bound calls"
[ "$failed" -eq 0 ]
