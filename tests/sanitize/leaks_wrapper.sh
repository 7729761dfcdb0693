#!/bin/sh
# leaks_wrapper.sh: stands in for bin/execinfo_ex_leaks in the build view
# that tests/unit/test_leaks.c gets as EXECINFO_EX_BUILD under make
# test-asan and make test-valgrind (tests/sanitize/sanitize.mk): the test's
# own process is not checked for leaks (its scratch strings live to its
# exit), the tool it runs is, under SANITIZE_LEAKS_RUNNER (a command
# prefix: env with ASAN_OPTIONS, or valgrind with its options).
set -f  # the prefix is split into words, never globbed
exec $SANITIZE_LEAKS_RUNNER "$SANITIZE_LEAKS_TOOL" "$@"
