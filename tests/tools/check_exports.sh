#!/bin/sh
# The shared library exports exactly the API listed in the version script,
# and every exported function is declared in the public header and has a
# man page. Usage: check_exports.sh LIBRARY VERSION_SCRIPT [INTERPOSED...]
# where INTERPOSED are the libc functions it replaces (explained in
# docs/DECISIONS.md instead of the header).
set -eu
library=$1
map=$2
shift 2
interposed="$*"
root=$(cd "$(dirname "$0")/../.." && pwd)
expected=$(sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\);$/\1/p' "$map" | sort -u)
actual=$(nm -D --defined-only "$library" | awk '$3 != "" { sub(/@.*/, "", $3); print $3 }' \
         | grep -vx 'EXECINFO_EX_[0-9]*' | sort -u)
passed=0
failed=0
if [ "$expected" = "$actual" ]; then
    passed=$((passed + 1))
else
    echo "not ok - exports differ from $map:"
    printf '%s\n' "$expected" > /tmp/execinfo_ex_expected.$$
    printf '%s\n' "$actual" | diff /tmp/execinfo_ex_expected.$$ - || true
    rm -f /tmp/execinfo_ex_expected.$$
    failed=$((failed + 1))
fi
for symbol in $expected; do
    if printf '%s\n' $interposed | grep -qx "$symbol"; then
        if grep -qw "$symbol" "$root/docs/DECISIONS.md"; then
            passed=$((passed + 1))
        else
            echo "not ok - $symbol is interposed but not explained in docs/DECISIONS.md"
            failed=$((failed + 1))
        fi
    elif ! grep -q -e "[ *]$symbol(" -e "[ *]$symbol)(" "$root/include/execinfo_ex.h"; then
        echo "not ok - $symbol is exported but not declared in include/execinfo_ex.h"
        failed=$((failed + 1))
    elif ! grep -rqw "$symbol" "$root/man/man3"; then
        echo "not ok - $symbol has no man page"
        failed=$((failed + 1))
    else
        passed=$((passed + 1))
    fi
done
echo "exports check: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
