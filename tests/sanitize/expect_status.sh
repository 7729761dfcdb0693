#!/bin/sh
# expect_status.sh STATUS COMMAND...: run COMMAND; exit 0 if it exited with
# STATUS (the leak tool exits 1 when it lists leaks), else say what it did
# and exit 1. For tests/sanitize/sanitize.mk.
want=$1
shift
"$@"
got=$?
if [ "$got" != "$want" ]; then
    echo "expect_status.sh: '$*' exited with $got, want $want"
    exit 1
fi
exit 0
