# tests/integration/commands.sh: sourced by tests/integration/run.sh in its
# section 5, with its helpers (ok, not_ok, show, build, run_tool, ...) and
# the install in $prefix. Issue 13:
#  - execinfo_ex_run -o with an existing FILE says why, once, on stderr,
#    before the program starts; --overwrite replaces the file;
#  - the installed execinfo_ex_heap on heap_user.c (no library linked): a
#    correct run (arguments untouched, status kept), a heap overflow (abort,
#    the report with the stacks; --on-error=report; --json -o), the flags
#    as options, refusals, leak traces for execinfo_ex_leaks (--mtrace for a
#    program that calls mtrace(), --leaks for one that does not).
# shellcheck shell=sh

# Issue 13, item 5: an existing -o FILE is said once, before the program
# runs (the report then goes to stderr); --overwrite replaces it.
echo "old contents" >"$tmp/cwd/exists.txt"
run_tool tool_exists - -o exists.txt "$TOOL_SH" -c 'kill -SEGV $$'
said=$(grep -c 'exists.txt exists .*--overwrite replaces it' "$tmp/out/tool_exists.err" || true)
if [ "$(cat "$tmp/out/tool_exists.status")" = 139 ] && [ "$said" = 1 ] &&
    [ "$(head -n 1 "$tmp/out/tool_exists.err" | cut -c1-17)" = "execinfo_ex_run: " ] &&
    grep -q 'fatal signal 11 (SIGSEGV)' "$tmp/out/tool_exists.err" &&
    [ "$(cat "$tmp/cwd/exists.txt")" = "old contents" ]; then
    ok "execinfo_ex_run -o EXISTING: says why once, first, on stderr; report on stderr; file kept"
else
    not_ok "execinfo_ex_run -o EXISTING: says why once, first, on stderr; report on stderr; file kept" \
        "status $(cat "$tmp/out/tool_exists.status"), reason lines: $said"
    show "$tmp/out/tool_exists.err"
fi
run_tool tool_overwrite - --overwrite -o exists.txt "$TOOL_SH" -c 'kill -SEGV $$'
if [ "$(cat "$tmp/out/tool_overwrite.status")" = 139 ] && [ ! -s "$tmp/out/tool_overwrite.err" ] &&
    grep -q 'fatal signal 11 (SIGSEGV)' "$tmp/cwd/exists.txt" && ! grep -q 'old contents' "$tmp/cwd/exists.txt"; then
    ok "execinfo_ex_run --overwrite -o EXISTING: the report replaces the file, nothing on stderr"
else
    not_ok "execinfo_ex_run --overwrite -o EXISTING: the report replaces the file, nothing on stderr" \
        "status $(cat "$tmp/out/tool_overwrite.status")"
    show "$tmp/out/tool_overwrite.err"
    show "$tmp/cwd/exists.txt"
fi
ln -s exists.txt "$tmp/cwd/link.txt"
run_tool tool_overwrite_link - --overwrite -o link.txt true
expect_grep "execinfo_ex_run --overwrite -o SYMLINK: says it is never replaced" "$tmp/out/tool_overwrite_link.err" \
    '^execinfo_ex_run: .*link.txt is not a regular file of yours with one link'
run_tool tool_no_directory - -o missing/crash.txt true
expect_grep "execinfo_ex_run -o MISSING/FILE: says the file cannot be created" "$tmp/out/tool_no_directory.err" \
    '^execinfo_ex_run: cannot create .*missing/crash.txt .*No such file or directory'
run_tool tool_new_file - -o fresh.txt true
if [ "$(cat "$tmp/out/tool_new_file.status")" = 0 ] && [ ! -s "$tmp/out/tool_new_file.err" ]; then
    ok "execinfo_ex_run -o NEW-FILE, no crash: nothing on stderr"
else
    not_ok "execinfo_ex_run -o NEW-FILE, no crash: nothing on stderr"
    show "$tmp/out/tool_new_file.err"
fi

# ---- the installed heap command ------------------------------------------------
# Issue 13, item 3: execinfo_ex_heap finds the installed hooks library,
# takes the heap options as flags, passes the arguments through and exits
# with the program's status. heap_user.c is built with no library at all.
heap_tool=$prefix/bin/execinfo_ex_heap
build heap_user "$src/heap_user.c" -O0
# run_heap NAME ARGS...: the installed heap command in <tmp>/cwd, with no
# EXECINFO_EX_OPTIONS; out/NAME.{out,err,status}.
run_heap() {
    name=$1
    shift
    status=0
    # The outer 2>/dev/null: the shell's own "Aborted" line.
    { (cd "$tmp/cwd" && exec env -u EXECINFO_EX_OPTIONS timeout 20 "$heap_tool" "$@") \
        >"$tmp/out/$name.out" 2>"$tmp/out/$name.err" || status=$?; } 2>/dev/null
    echo "$status" >"$tmp/out/$name.status"
    drop_qemu_lines "$tmp/out/$name.err"
}
expect_heap_status() {
    if [ "$(cat "$tmp/out/$1.status")" = "$2" ]; then
        ok "execinfo_ex_heap $3: status $2"
    else
        not_ok "execinfo_ex_heap $3: status $2" "status $(cat "$tmp/out/$1.status")"
        show "$tmp/out/$1.out"
        show "$tmp/out/$1.err"
    fi
}

run_heap heap_ok "$tmp/bin/heap_user" ok "two words" -- -x '' '$HOME' '*'
expect_heap_status heap_ok 0 "on a correct program"
printf '%s\n' "two words" -- -x '' '$HOME' '*' >"$tmp/out/heap_ok.want"
if cmp -s "$tmp/out/heap_ok.want" "$tmp/out/heap_ok.out" && [ ! -s "$tmp/out/heap_ok.err" ]; then
    ok "execinfo_ex_heap on a correct program: arguments passed untouched (spaces, --, -x, empty, \$HOME, *), nothing on stderr"
else
    not_ok "execinfo_ex_heap on a correct program: arguments passed untouched, nothing on stderr"
    show "$tmp/out/heap_ok.out"
    show "$tmp/out/heap_ok.err"
fi
run_heap heap_exit "$tmp/bin/heap_user" exit 7
expect_heap_status heap_exit 7 "heap_user exit 7 (the program's own status)"

run_heap heap_overflow "$tmp/bin/heap_user" overflow
expect_heap_status heap_overflow 134 "on a heap overflow (the program's SIGABRT)"
expect_grep "execinfo_ex_heap on a heap overflow: heap-buffer-overflow reported" "$tmp/out/heap_overflow.err" \
    'heap error: heap-buffer-overflow .*found at free'
expect_grep "execinfo_ex_heap on a heap overflow: the block's allocation stack names overflow_victim" \
    "$tmp/out/heap_overflow.err" 'heap_user\(overflow_victim\+0x[0-9a-f]+\) \[0x[0-9a-f]+\] at ([^ ]*/)?heap_user\.c:[0-9]+$'
expect_grep "execinfo_ex_heap on a heap overflow: the crash report of the abort" "$tmp/out/heap_overflow.err" \
    'fatal signal 6 \(SIGABRT\)'

run_heap heap_report -e report -g 32 -f 4 "$tmp/bin/heap_user" overflow
expect_heap_status heap_report 5 "-e report -g 32 -f 4 on a heap overflow (the program goes on)"
expect_grep "execinfo_ex_heap -e report: heap-buffer-overflow reported" "$tmp/out/heap_report.err" \
    'heap error: heap-buffer-overflow'
if grep -q 'fatal signal' "$tmp/out/heap_report.err"; then
    not_ok "execinfo_ex_heap -e report: no crash report"
    show "$tmp/out/heap_report.err"
else
    ok "execinfo_ex_heap -e report: no crash report"
fi

run_heap heap_json --json -o heap.json "$tmp/bin/heap_user" overflow
expect_heap_status heap_json 134 "--json -o heap.json on a heap overflow"
if python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["heap_error"]["kind"] == "heap-buffer-overflow", r["heap_error"]' \
    "$tmp/cwd/heap.json" >"$tmp/out/heap_json.check" 2>&1 && [ ! -s "$tmp/out/heap_json.err" ]; then
    ok "execinfo_ex_heap --json -o heap.json: one JSON report in the file, heap_error heap-buffer-overflow; stderr empty"
else
    not_ok "execinfo_ex_heap --json -o heap.json: one JSON report in the file, heap_error heap-buffer-overflow; stderr empty"
    show "$tmp/out/heap_json.check"
    show "$tmp/cwd/heap.json"
    show "$tmp/out/heap_json.err"
fi

# The flags become the library's options, in order, after the inherited
# ones; the installed library is preloaded.
run_heap heap_compose -f 8 --free-frames 3 -g 32 -q 1M --fill 0xaa --alloc-fill 7 --fill-max 1K -e report \
    --overwrite -o r.txt "$TOOL_SH" -c 'echo "$EXECINFO_EX_OPTIONS"; echo "$LD_PRELOAD"'
want_options="heap_frames=8:free_frames=3:guard=32:quarantine=1M:free_fill=0xaa:alloc_fill=7:fill_max=1K:on_error=report:overwrite=1:report=$tmp/cwd/r.txt"
if [ "$(sed -n 1p "$tmp/out/heap_compose.out")" = "$want_options" ] &&
    [ "$(sed -n 2p "$tmp/out/heap_compose.out")" = "$prefix/lib/libexecinfo_ex_hooks.so.0" ]; then
    ok "execinfo_ex_heap flags: EXECINFO_EX_OPTIONS=$want_options, LD_PRELOAD=<prefix>/lib/libexecinfo_ex_hooks.so.0"
else
    not_ok "execinfo_ex_heap flags: EXECINFO_EX_OPTIONS and LD_PRELOAD" "want $want_options"
    show "$tmp/out/heap_compose.out"
    show "$tmp/out/heap_compose.err"
fi

run_heap heap_bad_guard -g 5000 "$TOOL_SH" -c 'echo ran'
if [ "$(cat "$tmp/out/heap_bad_guard.status")" = 2 ] && ! grep -q ran "$tmp/out/heap_bad_guard.out" &&
    grep -q "^execinfo_ex_heap: .*bad value '5000' for option 'guard'" "$tmp/out/heap_bad_guard.err"; then
    ok "execinfo_ex_heap -g 5000: refused, status 2, the program not run"
else
    not_ok "execinfo_ex_heap -g 5000: refused, status 2, the program not run"
    show "$tmp/out/heap_bad_guard.err"
fi
run_heap heap_bad_free_frames --free-frames=65 "$TOOL_SH" -c 'echo ran'
if [ "$(cat "$tmp/out/heap_bad_free_frames.status")" = 2 ] && ! grep -q ran "$tmp/out/heap_bad_free_frames.out" &&
    grep -q "^execinfo_ex_heap: .*bad value '65' for option 'free_frames'" "$tmp/out/heap_bad_free_frames.err"; then
    ok "execinfo_ex_heap --free-frames=65: refused, status 2, the program not run"
else
    not_ok "execinfo_ex_heap --free-frames=65: refused, status 2, the program not run"
    show "$tmp/out/heap_bad_free_frames.err"
fi
run_heap heap_option --option heap_frames=12 -O lines=all "$TOOL_SH" -c 'echo "$EXECINFO_EX_OPTIONS"'
if [ "$(cat "$tmp/out/heap_option.status")" = 0 ] &&
    [ "$(cat "$tmp/out/heap_option.out")" = heap_frames=12:lines=all ]; then
    ok "execinfo_ex_heap --option heap_frames=12 -O lines=all: passed through in order"
else
    not_ok "execinfo_ex_heap --option heap_frames=12 -O lines=all: passed through in order"
    show "$tmp/out/heap_option.out"
    show "$tmp/out/heap_option.err"
fi
run_heap heap_option_bad --option guard=5000 "$TOOL_SH" -c 'echo ran'
if [ "$(cat "$tmp/out/heap_option_bad.status")" = 2 ] && ! grep -q ran "$tmp/out/heap_option_bad.out" &&
    grep -q "^execinfo_ex_heap: .*bad value '5000' for option 'guard'" "$tmp/out/heap_option_bad.err"; then
    ok "execinfo_ex_heap --option guard=5000: refused, status 2, the program not run"
else
    not_ok "execinfo_ex_heap --option guard=5000: refused, status 2, the program not run"
    show "$tmp/out/heap_option_bad.err"
fi
heap_status=0
(cd "$tmp/cwd" && EXECINFO_EX_OPTIONS=heap=0 timeout 20 "$heap_tool" "$TOOL_SH" -c 'echo ran') \
    >"$tmp/out/heap_off.out" 2>&1 || heap_status=$?
if [ "$heap_status" = 2 ] && grep -q '^execinfo_ex_heap: .*heap=0' "$tmp/out/heap_off.out"; then
    ok "execinfo_ex_heap with EXECINFO_EX_OPTIONS=heap=0: refused, status 2"
else
    not_ok "execinfo_ex_heap with EXECINFO_EX_OPTIONS=heap=0: refused, status 2" "status $heap_status"
    show "$tmp/out/heap_off.out"
fi
run_heap heap_help --help
expect_heap_status heap_help 0 "--help"
expect_grep "execinfo_ex_heap --help: usage, every flag" "$tmp/out/heap_help.out" \
    '^Usage: execinfo_ex_heap \[OPTION\]\.\.\. \[--\] PROGRAM \[ARGUMENT\]\.\.\.$'
for flag in --frames --guard --quarantine --fill --alloc-fill --fill-max --on-error --report --overwrite --json --leaks --mtrace; do
    grep -q -- "$flag" "$tmp/out/heap_help.out" || not_ok "execinfo_ex_heap --help: mentions $flag"
done
run_heap heap_none
expect_heap_status heap_none 2 "with no program"

# A leak report: the program calls mtrace(); --mtrace names the trace.
run_heap heap_leak --mtrace=leak.trace "$tmp/bin/heap_user" leak
expect_heap_status heap_leak 0 "--mtrace=leak.trace heap_user leak"
leaks_status=0
"$prefix/bin/execinfo_ex_leaks" "$tmp/cwd/leak.trace" >"$tmp/out/leaks.out" 2>&1 || leaks_status=$?
if [ "$leaks_status" = 1 ] && grep -q '^400 bytes in 4 blocks' "$tmp/out/leaks.out" &&
    grep -Eq 'leak_victim at ([^ ]*/)?heap_user\.c:[0-9]+' "$tmp/out/leaks.out"; then
    ok "execinfo_ex_leaks on the trace: 400 bytes in 4 blocks from leak_victim, status 1"
else
    not_ok "execinfo_ex_leaks on the trace: 400 bytes in 4 blocks from leak_victim, status 1" "status $leaks_status"
    show "$tmp/out/leaks.out"
fi

# --leaks: a program that never calls mtrace() is traced from load to exit.
run_heap heap_leaks --leaks=quiet.trace "$tmp/bin/heap_user" leak-quiet
expect_heap_status heap_leaks 0 "--leaks=quiet.trace heap_user leak-quiet (no mtrace() call)"
leaks_status=0
"$prefix/bin/execinfo_ex_leaks" "$tmp/cwd/quiet.trace" >"$tmp/out/leaks_quiet.out" 2>&1 || leaks_status=$?
if [ "$leaks_status" = 1 ] && grep -q '^300 bytes in 3 blocks' "$tmp/out/leaks_quiet.out" &&
    grep -Eq '#0 leak_victim at ([^ ]*/)?heap_user\.c:[0-9]+' "$tmp/out/leaks_quiet.out" &&
    grep -Eq '#1 main at ([^ ]*/)?heap_user\.c:[0-9]+' "$tmp/out/leaks_quiet.out"; then
    ok "execinfo_ex_leaks on the --leaks trace: 300 bytes in 3 blocks, leak_victim called by main (stacks), status 1"
else
    not_ok "execinfo_ex_leaks on the --leaks trace: 300 bytes in 3 blocks, leak_victim called by main (stacks), status 1" \
        "status $leaks_status"
    show "$tmp/out/leaks_quiet.out"
    show "$tmp/out/heap_leaks.err"
fi
run_heap heap_leaks_preload --leaks=t2 "$TOOL_SH" -c 'echo "$LD_PRELOAD"; echo "$MALLOC_TRACE"; echo "$EXECINFO_EX_OPTIONS"'
if [ "$(sed -n 1p "$tmp/out/heap_leaks_preload.out")" = "$prefix/lib/libexecinfo_ex_hooks.so.0:$prefix/lib/execinfo_ex/mtrace_at_load.so" ] &&
    [ "$(sed -n 2p "$tmp/out/heap_leaks_preload.out")" = "$tmp/cwd/t2" ] &&
    [ "$(sed -n 3p "$tmp/out/heap_leaks_preload.out")" = "mtrace_frames=16" ]; then
    ok "execinfo_ex_heap --leaks=t2: preloads the hooks library then mtrace_at_load.so, MALLOC_TRACE absolute, mtrace_frames=16"
else
    not_ok "execinfo_ex_heap --leaks=t2: preloads the hooks library then mtrace_at_load.so, MALLOC_TRACE absolute, mtrace_frames=16"
    show "$tmp/out/heap_leaks_preload.out"
fi
