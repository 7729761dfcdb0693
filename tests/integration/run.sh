#!/bin/sh
# tests/integration/run.sh: install execinfo_ex and use it the way a user
# would. Run by `make test-integration` (after `make all`) from the repo root:
#   sh tests/integration/run.sh
#
#  1. make install PREFIX=<tmp>/prefix; make install/uninstall with DESTDIR;
#     ldconfig run by install and uninstall only without DESTDIR and for a
#     LIBDIR ldconfig scans (a fake ldconfig; the real one for the query).
#  2. user_program.c built with `cc ... $(pkg-config --cflags --libs
#     execinfo_ex)`, without -rdynamic, run with LD_LIBRARY_PATH: static and
#     global functions named in backtrace_symbols and backtrace_symbols_fd
#     shapes, print_trace's " at user_program.c:LINE" equal to the call line.
#  3. The same, and fd_only.c (only backtrace + backtrace_symbols_fd), linked
#     statically with `pkg-config --cflags --libs execinfo_ex_static` from
#     the same prefix, its .so beside the archive: nothing needs the .so.
#  4. with_libunwind.c linked with -lexecinfo_ex -lunwind: backtrace is ours.
#  5. The installed execinfo_ex_run: a crash's report and status; bad options
#     (flags or inherited EXECINFO_EX_OPTIONS) refused with status 2; the
#     order of the options it composes; a relative -o made absolute.
#  6. python3 with ctypes under the preloaded library: a crash through
#     libffi and _ctypes, both dlopen'd after start-up, names their frames.
#
# Prints "ok - ..." / "not ok - ..." (diagnostics as "#   ..." lines), then
# "integration: N passed, M failed"; exits 1 when M > 0. Every program run
# is bounded by `timeout 20`. Variables: CC (default cc), MAKE (make),
# KEEP_TMP=1 keeps the temp dir for inspection.
# For a cross build run under qemu-user (issue 27: tests/aarch64.mk's
# qemu-integration sets them all; unset, nothing changes):
#   MAKE_ARGS       more arguments for each make (CROSS_COMPILE=aarch64-linux-gnu-);
#   SYSROOT_FLAGS   added to each user program's build, not echoed: the
#                   sysroot's -isystem, -L and -Wl,-rpath-link (cross.mk);
#   PKG_CONFIG_LIBDIR  pkg-config's own: the sysroot's .pc files, for the
#                   dependencies the static line names;
#   LDD             lists a program's libraries (default ldd; the target's
#                   ld.so --list);
#   TOOL_SH         the shell the installed tools run (default sh, from PATH;
#                   the target's dash, which the tools' preload reaches);
#   QEMU_USER       the qemu-user that runs the programs through binfmt_misc
#                   (qemu-aarch64): qemu's own lines are taken out of their
#                   stderr, and what qemu cannot give is skipped with its
#                   reason (Q1, Q3, Q15: tests/aarch64.mk).
# tests/integration/commands.sh (issue 13), sourced in 5: an existing -o
# FILE said up front and --overwrite; the installed execinfo_ex_heap.
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
src=tests/integration
CC=${CC:-cc}
MAKE=${MAKE:-make}
MAKE_ARGS=${MAKE_ARGS:-}
SYSROOT_FLAGS=${SYSROOT_FLAGS:-}
LDD=${LDD:-ldd}
TOOL_SH=${TOOL_SH:-sh}
QEMU_USER=${QEMU_USER:-}
USER_CFLAGS="-g -O2 -Wall"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/execinfo_ex_integration.XXXXXX")
cleanup() {
    if [ "${KEEP_TMP:-0}" = 1 ]; then echo "# kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$tmp/bin" "$tmp/out"

passed=0
failed=0

ok() {
    passed=$((passed + 1))
    echo "ok - $1"
}

# not_ok DESCRIPTION [EXPLANATION-LINE...]
not_ok() {
    failed=$((failed + 1))
    echo "not ok - $1"
    shift
    for line in "$@"; do
        echo "#   $line"
    done
}

# show FILE [MAX]: a file's first lines as diagnostics.
show() {
    if [ -s "$1" ]; then
        echo "#   --- $(basename "$1"):"
        head -n "${2:-40}" "$1" | sed 's/^/#   | /'
    else
        echo "#   --- $(basename "$1"): (empty or missing)"
    fi
}

# section FILE NAME: the lines after "== NAME" up to the next "== " line.
section() {
    awk -v want="$2" '/^== / { on = ($2 == want); next } on' "$1"
}

# line_of MARKER FILE: the line number of the only line containing MARKER.
line_of() {
    grep -n -- "$1" "$2" | cut -d: -f1
}

# quiet_make LOG ARGS...: run make quietly, its output in LOG.
quiet_make() {
    log=$1
    shift
    # shellcheck disable=SC2086  # MAKE_ARGS: words
    "$MAKE" -s --no-print-directory $MAKE_ARGS "$@" >"$log" 2>&1
}

# drop_qemu_lines FILE: under qemu-user (QEMU_USER), the lines of a
# program's stderr that qemu's host process writes, not the program: Q1,
# "qemu: uncaught target signal ..." as the program dies by a signal; Q15,
# the host loader's refusal of the aarch64 library in the LD_PRELOAD the
# tools set, which qemu (and a host program, Q3) inherits: the guest's own
# loader preloads it (the reports and the echoed LD_PRELOAD show it).
# The lines taken out are kept in FILE.qemu (KEEP_TMP=1).
drop_qemu_lines() {
    [ -n "$QEMU_USER" ] && [ -e "$1" ] || return 0
    set -- "$1" '^qemu: uncaught target signal [0-9]+ \([^)]*\) - (core dumped|exiting)$' \
        "^ERROR: ld\\.so: object '[^']*' from LD_PRELOAD cannot be preloaded \\(cannot open shared object file\\): ignored\\.$"
    grep -E -e "$2" -e "$3" "$1" >"$1.qemu" || true
    grep -v -E -e "$2" -e "$3" "$1" >"$1.program" || true
    mv "$1.program" "$1"
}

# qemu_skip DESCRIPTION REASON: under qemu-user, a check it cannot give.
qemu_skip() {
    ok "$1 # SKIP under $QEMU_USER: $2"
}

# run_prog NAME [ENV=VALUE...] -- PROGRAM: run it bounded, stdout in
# out/NAME.out, stderr in out/NAME.err, status in out/NAME.status.
run_prog() {
    name=$1
    shift
    status=0
    env "$@" timeout 20 "$tmp/bin/$name" >"$tmp/out/$name.out" 2>"$tmp/out/$name.err" || status=$?
    echo "$status" >"$tmp/out/$name.status"
    drop_qemu_lines "$tmp/out/$name.err"
}

# build NAME SOURCE ARGS...: cc SOURCE -o bin/NAME ARGS; one check.
build() {
    name=$1
    source=$2
    shift 2
    # shellcheck disable=SC2086  # CC, USER_CFLAGS, SYSROOT_FLAGS: words
    if $CC $USER_CFLAGS $SYSROOT_FLAGS "$source" -o "$tmp/bin/$name" "$@" >"$tmp/out/$name.build" 2>&1; then
        ok "$name: builds: $CC $USER_CFLAGS $(basename "$source") $*"
    else
        not_ok "$name: builds: $CC $USER_CFLAGS $(basename "$source") $*"
        show "$tmp/out/$name.build"
        rm -f "$tmp/bin/$name"
    fi
}

# expect_status NAME: the run exited 0.
expect_status() {
    status=$(cat "$tmp/out/$1.status")
    if [ "$status" = 0 ]; then
        ok "$1: runs and exits 0"
    else
        case $status in
            124) why="killed by timeout 20" ;;
            127) why="not built or not runnable" ;;
            *) why="exit status $status" ;;
        esac
        not_ok "$1: runs and exits 0 ($why)"
        show "$tmp/out/$1.out"
        show "$tmp/out/$1.err" 20
    fi
}

# expect_grep DESCRIPTION FILE ERE [EXPLANATION...]: FILE has a line matching.
expect_grep() {
    description=$1
    file=$2
    pattern=$3
    shift 3
    if grep -Eq -- "$pattern" "$file"; then
        ok "$description"
    else
        not_ok "$description" "no line matches: $pattern" "$@"
        show "$file"
    fi
}

# ---- 1. install ---------------------------------------------------------------

# The files a user relies on, relative to the prefix.
INSTALLED_FILES="include/execinfo_ex.h lib/libexecinfo_ex.so lib/libexecinfo_ex.so.0
lib/libexecinfo_ex.a lib/pkgconfig/execinfo_ex.pc share/man/man3/backtrace.3
share/man/man3/backtrace_install_fatal_handler.3 share/man/man1/execinfo_ex_run.1
bin/execinfo_ex_run share/doc/execinfo_ex/examples/print_trace.c
bin/execinfo_ex_heap share/man/man1/execinfo_ex_heap.1 lib/pkgconfig/execinfo_ex_static.pc
lib/execinfo_ex/mtrace_at_load.so"

# expect_installed LABEL DIR: every INSTALLED_FILES entry exists under DIR.
expect_installed() {
    for file in $INSTALLED_FILES; do
        if [ -e "$2/$file" ]; then
            ok "$1: installs $file"
        else
            not_ok "$1: installs $file" "missing: $2/$file"
        fi
    done
}

# expect_shared_links LABEL LIBDIR: libexecinfo_ex.so -> .so.0 -> .so.X.Y.Z, a
# real file with SONAME libexecinfo_ex.so.0.
expect_shared_links() {
    lib=$2
    real=$(ls "$lib"/libexecinfo_ex.so.*.*.* 2>/dev/null | head -n 1)
    if [ -L "$lib/libexecinfo_ex.so" ] && [ -L "$lib/libexecinfo_ex.so.0" ] &&
        [ -n "$real" ] && [ -f "$real" ] && [ ! -L "$real" ] &&
        [ "$(readlink "$lib/libexecinfo_ex.so")" = libexecinfo_ex.so.0 ] &&
        [ "$(readlink "$lib/libexecinfo_ex.so.0")" = "$(basename "$real")" ] &&
        readelf -d "$real" | grep -q 'SONAME.*\[libexecinfo_ex\.so\.0\]'; then
        ok "$1: libexecinfo_ex.so -> .so.0 -> $(basename "$real") (SONAME libexecinfo_ex.so.0), relative links"
    else
        not_ok "$1: libexecinfo_ex.so -> .so.0 -> .so.X.Y.Z (SONAME libexecinfo_ex.so.0), relative links" \
            "$(ls -l "$lib" 2>&1 | grep libexecinfo_ex | tr '\n' ';')"
    fi
}

prefix=$tmp/prefix
if quiet_make "$tmp/out/install.log" install PREFIX="$prefix"; then
    ok "make install PREFIX=<tmp>/prefix succeeds"
else
    not_ok "make install PREFIX=<tmp>/prefix succeeds (the checks below use what it installed)"
    show "$tmp/out/install.log" 20
fi
expect_installed "install PREFIX" "$prefix"
expect_shared_links "install PREFIX" "$prefix/lib"

missing_man=
for page in man/man3/*.3; do
    [ -e "$prefix/share/man/man3/$(basename "$page")" ] || missing_man="$missing_man $(basename "$page")"
done
if [ -z "$missing_man" ]; then
    ok "install PREFIX: installs every man page of man/man3"
else
    not_ok "install PREFIX: installs every man page of man/man3" "missing:$missing_man"
fi

# pkg-config must point at the prefix the library was installed into. If it
# does not, the rest of the run works around it with a corrected copy of the
# .pc (in <tmp>/pc_fixed/PREFIX-NAME/), so that one bug does not hide others.
pc_libdir=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --variable=libdir execinfo_ex 2>&1 || true)
pc_includedir=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --variable=includedir execinfo_ex 2>&1 || true)
PC_WORKAROUND=
if [ "$pc_libdir" = "$prefix/lib" ] && [ "$pc_includedir" = "$prefix/include" ]; then
    ok "installed execinfo_ex.pc has libdir and includedir of PREFIX=<tmp>/prefix"
else
    not_ok "installed execinfo_ex.pc has libdir and includedir of PREFIX=<tmp>/prefix" \
        "libdir=$pc_libdir includedir=$pc_includedir, want $prefix/lib and $prefix/include" \
        "build/execinfo_ex.pc is made by 'make all' with the PREFIX of that run and is not" \
        "remade when 'make install' is given another PREFIX (the rule depends only on" \
        "execinfo_ex.pc.in and Makefile), so pkg-config sends users to the wrong -I/-L." \
        "The checks below work around it with a corrected copy of the installed .pc."
    PC_WORKAROUND=yes
fi

# pkg PREFIX ARGS...: pkg-config for the library installed into PREFIX.
pkg() {
    pkg_dir=$1/lib/pkgconfig
    if [ -n "$PC_WORKAROUND" ]; then
        pkg_dir=$tmp/pc_fixed/$(basename "$1")
        if [ ! -e "$pkg_dir/execinfo_ex.pc" ]; then
            mkdir -p "$pkg_dir"
            sed -e "s|^prefix=.*|prefix=$1|" -e "s|^libdir=.*|libdir=$1/lib|" \
                -e "s|^includedir=.*|includedir=$1/include|" \
                "$1/lib/pkgconfig/execinfo_ex.pc" >"$pkg_dir/execinfo_ex.pc"
        fi
    fi
    shift
    PKG_CONFIG_PATH=$pkg_dir pkg-config "$@"
}

if pkg "$prefix" --exists --print-errors execinfo_ex >"$tmp/out/pkg_exists.log" 2>&1 &&
    pkg "$prefix" --static --exists --print-errors execinfo_ex >>"$tmp/out/pkg_exists.log" 2>&1; then
    ok "pkg-config --exists execinfo_ex (and --static: Requires.private all found)"
else
    not_ok "pkg-config --exists execinfo_ex (and --static: Requires.private all found)"
    show "$tmp/out/pkg_exists.log"
fi

# DESTDIR staging: files under DESTDIR/PREFIX only, pc for the real PREFIX,
# and uninstall removes them.
stage=$tmp/stage
if quiet_make "$tmp/out/stage.log" install PREFIX=/usr/local DESTDIR="$stage"; then
    ok "make install PREFIX=/usr/local DESTDIR=<tmp>/stage succeeds"
else
    not_ok "make install PREFIX=/usr/local DESTDIR=<tmp>/stage succeeds"
    show "$tmp/out/stage.log" 20
fi
expect_installed "install DESTDIR" "$stage/usr/local"
expect_shared_links "install DESTDIR" "$stage/usr/local/lib"

outside=$(cd "$stage" 2>/dev/null && find . -mindepth 1 ! -path ./usr ! -path ./usr/local ! -path './usr/local/*' | head -n 5)
if [ -d "$stage/usr/local" ] && [ -z "$outside" ]; then
    ok "install DESTDIR: nothing outside DESTDIR/usr/local"
else
    not_ok "install DESTDIR: nothing outside DESTDIR/usr/local" "found: $outside"
fi

if grep -qx 'libdir=/usr/local/lib' "$stage/usr/local/lib/pkgconfig/execinfo_ex.pc" 2>/dev/null &&
    grep -qx 'includedir=/usr/local/include' "$stage/usr/local/lib/pkgconfig/execinfo_ex.pc" &&
    ! grep -q "$stage" "$stage/usr/local/lib/pkgconfig/execinfo_ex.pc"; then
    ok "install DESTDIR: execinfo_ex.pc names /usr/local, not DESTDIR"
else
    not_ok "install DESTDIR: execinfo_ex.pc names /usr/local, not DESTDIR"
    show "$stage/usr/local/lib/pkgconfig/execinfo_ex.pc"
fi

if quiet_make "$tmp/out/uninstall.log" uninstall PREFIX=/usr/local DESTDIR="$stage"; then
    ok "make uninstall PREFIX=/usr/local DESTDIR=<tmp>/stage succeeds"
else
    not_ok "make uninstall PREFIX=/usr/local DESTDIR=<tmp>/stage succeeds"
    show "$tmp/out/uninstall.log" 20
fi
left=$(find "$stage" ! -type d 2>/dev/null | sed "s|^$stage||" | head -n 10 | tr '\n' ' ')
if [ -z "$left" ]; then
    ok "make uninstall removes every installed file"
else
    not_ok "make uninstall removes every installed file" "left: $left"
fi

# Issue 13, item 2: install and uninstall run ldconfig when the install is
# to the real root (no DESTDIR) and ldconfig scans LIBDIR. A fake ldconfig
# answers the query (-v -N -X) with FAKE_SCANNED and logs any other call.
fake_ldconfig=$tmp/bin/fake_ldconfig
cat >"$fake_ldconfig" <<EOF
#!/bin/sh
if [ "\$1" = -v ]; then
    printf '%s: (from fake.conf:1)\n\tlibfake.so.1 -> libfake.so.1.0\n' "\$FAKE_SCANNED"
    exit 0
fi
echo "ldconfig \$*" >>"$tmp/out/ldconfig.log"
EOF
chmod +x "$fake_ldconfig"
ld_prefix=$tmp/ld_prefix
# ldconfig_case DESCRIPTION WANT(ran|not-run) SCANNED MAKE-ARGS...
ldconfig_case() {
    description=$1
    want=$2
    scanned=$3
    shift 3
    rm -f "$tmp/out/ldconfig.log"
    FAKE_SCANNED=$scanned quiet_make "$tmp/out/ldconfig_make.log" "$@" LDCONFIG="$fake_ldconfig" || true
    if [ -s "$tmp/out/ldconfig.log" ]; then got=ran; else got=not-run; fi
    if [ "$got" = "$want" ]; then
        ok "make $1 ...: ldconfig $want ($description)"
    else
        not_ok "make $1 ...: ldconfig $want ($description)" "ldconfig $got; make $*"
        show "$tmp/out/ldconfig_make.log"
    fi
}
ldconfig_case "no DESTDIR, LIBDIR scanned" ran "$ld_prefix/lib" install PREFIX="$ld_prefix"
ldconfig_case "LIBDIR scanned, but DESTDIR given" not-run "$tmp/ld_stage$ld_prefix/lib" \
    install PREFIX="$ld_prefix" DESTDIR="$tmp/ld_stage"
ldconfig_case "no DESTDIR, LIBDIR not scanned" not-run /usr/local/lib install PREFIX="$ld_prefix"
expect_grep "make install into a directory ldconfig does not scan: says what to do" "$tmp/out/ldconfig_make.log" \
    "^note: $ld_prefix/lib is not in the loader's path: build programs with -Wl,-rpath,$ld_prefix/lib"
ldconfig_case "no DESTDIR, LIBDIR scanned" ran "$ld_prefix/lib" uninstall PREFIX="$ld_prefix"
# The query itself, with the real ldconfig: /usr/local/lib (libc.conf) and
# /usr/lib/x86_64-linux-gnu (listed as /lib/... on a merged /usr) are
# scanned, a temporary prefix is not.
for dir in /usr/local/lib /usr/lib/x86_64-linux-gnu; do
    if [ ! -d "$dir" ]; then
        ok "tools/loader_knows.sh $dir: skipped, no such directory"
    elif sh tools/loader_knows.sh "$dir"; then
        ok "tools/loader_knows.sh $dir: ldconfig scans it"
    else
        not_ok "tools/loader_knows.sh $dir: ldconfig scans it" "$(/sbin/ldconfig -v -N -X 2>/dev/null | grep '^/' | tr '\n' ';')"
    fi
done
if sh tools/loader_knows.sh "$prefix/lib"; then
    not_ok "tools/loader_knows.sh <tmp>/prefix/lib: not scanned"
else
    ok "tools/loader_knows.sh <tmp>/prefix/lib: not scanned"
fi

# ---- 2. a user program, dynamic -----------------------------------------------

user_src=$src/user_program.c
line_fd=$(line_of 'PRINT_TRACE_CALL fd' "$user_src")
line_stderr=$(line_of 'PRINT_TRACE_CALL stderr' "$user_src")

# check_user_program NAME: the output checks of user_program (both links).
check_user_program() {
    name=$1
    out=$tmp/out/$name.out
    expect_status "$name"
    section "$out" symbols >"$tmp/out/$name.symbols"
    section "$out" fd >"$tmp/out/$name.fd"
    section "$out" print_trace >"$tmp/out/$name.print_trace"
    for function in integ_static_leaf integ_global_middle main; do
        expect_grep "$name: backtrace_symbols names $function: \"$name($function+0x...) [0x...]\"" \
            "$tmp/out/$name.symbols" "^([^ ]*/)?$name\\($function\\+0x[0-9a-f]+\\) \\[0x[0-9a-f]+\\]\$"
        expect_grep "$name: backtrace_symbols_fd names $function: \"$name($function+0x...)[0x...]\"" \
            "$tmp/out/$name.fd" "^([^ ]*/)?$name\\($function\\+0x[0-9a-f]+\\)\\[0x[0-9a-f]+\\]\$"
    done
    order=$(grep -Eo '\((integ_static_leaf|integ_global_middle|main)\+' "$tmp/out/$name.symbols" | tr -d '(+' | tr '\n' ' ')
    if [ "$order" = "integ_static_leaf integ_global_middle main " ]; then
        ok "$name: backtrace starts at its caller: integ_static_leaf, integ_global_middle, main"
    else
        not_ok "$name: backtrace starts at its caller: integ_static_leaf, integ_global_middle, main" "got: $order"
        show "$tmp/out/$name.symbols"
    fi
    expect_grep "$name: print_trace_fd writes \"Obtained N stack frames.\"" \
        "$tmp/out/$name.print_trace" '^Obtained [0-9]+ stack frames\.$'
    expect_grep "$name: print_trace_fd: integ_static_leaf at user_program.c:$line_fd (the line of the call)" \
        "$tmp/out/$name.print_trace" "\\(integ_static_leaf\\+0x[0-9a-f]+\\) \\[0x[0-9a-f]+\\] at ([^ ]*/)?user_program\\.c:$line_fd\$"
    expect_grep "$name: print_trace_fd: main has \" at user_program.c:LINE\"" \
        "$tmp/out/$name.print_trace" "\\(main\\+0x[0-9a-f]+\\) \\[0x[0-9a-f]+\\] at ([^ ]*/)?user_program\\.c:[0-9]+\$"
    expect_grep "$name: print_trace (stderr): integ_static_leaf at user_program.c:$line_stderr (the line of the call)" \
        "$tmp/out/$name.err" "\\(integ_static_leaf\\+0x[0-9a-f]+\\) \\[0x[0-9a-f]+\\] at ([^ ]*/)?user_program\\.c:$line_stderr\$"
    expect_grep "$name: ran to the end" "$out" '^== end$'
}

cflags_libs=$(pkg "$prefix" --cflags --libs execinfo_ex 2>/dev/null || true)
# shellcheck disable=SC2086  # word splitting of pkg-config output intended
build user_dynamic "$user_src" $cflags_libs

if readelf -d "$tmp/bin/user_dynamic" 2>/dev/null | grep -q 'NEEDED.*\[libexecinfo_ex\.so\.0\]' &&
    ! nm -D "$tmp/bin/user_dynamic" 2>/dev/null | grep -Eq ' (integ_global_middle|main)$'; then
    ok "user_dynamic: needs libexecinfo_ex.so.0; its functions are not in .dynsym (no -rdynamic)"
else
    not_ok "user_dynamic: needs libexecinfo_ex.so.0; its functions are not in .dynsym (no -rdynamic)"
fi
# shellcheck disable=SC2086  # LDD: words (the target loader and --list)
resolved=$(LD_LIBRARY_PATH=$prefix/lib timeout 20 $LDD "$tmp/bin/user_dynamic" 2>&1 | grep libexecinfo_ex || true)
case $resolved in
    *"$prefix/lib/libexecinfo_ex.so.0"*) ok "user_dynamic: loads libexecinfo_ex.so.0 from the install prefix" ;;
    *) not_ok "user_dynamic: loads libexecinfo_ex.so.0 from the install prefix" "ldd: $resolved" ;;
esac

run_prog user_dynamic LD_LIBRARY_PATH="$prefix/lib"
check_user_program user_dynamic

# Issue 13, item 4: the prefix is outside the loader's path, so without
# LD_LIBRARY_PATH the program does not start; the README's rpath from
# pkg-config's libdir makes it start anywhere.
run_prog user_dynamic
if [ "$(cat "$tmp/out/user_dynamic.status")" = 127 ] &&
    grep -q 'libexecinfo_ex.so.0: cannot open shared object file' "$tmp/out/user_dynamic.err"; then
    ok "user_dynamic without LD_LIBRARY_PATH: does not start (the prefix is outside the loader's path)"
else
    not_ok "user_dynamic without LD_LIBRARY_PATH: does not start (the prefix is outside the loader's path)" \
        "status $(cat "$tmp/out/user_dynamic.status"): the rpath check below proves nothing"
fi
rpath_flag=-Wl,-rpath,$(pkg "$prefix" --variable=libdir execinfo_ex)
build user_rpath "$user_src" $cflags_libs "$rpath_flag"
run_prog user_rpath
check_user_program user_rpath

# The crash-handler subset, dynamic: the control for the static case below.
build fd_only_dynamic "$src/fd_only.c" $cflags_libs
run_prog fd_only_dynamic LD_LIBRARY_PATH="$prefix/lib"
expect_status fd_only_dynamic
for function in fd_only_static_leaf fd_only_global_middle main; do
    expect_grep "fd_only_dynamic: backtrace_symbols_fd names $function" "$tmp/out/fd_only_dynamic.out" \
        "^([^ ]*/)?fd_only_dynamic\\($function\\+0x[0-9a-f]+\\)\\[0x[0-9a-f]+\\]\$"
done

# ---- 3. linked statically against libexecinfo_ex.a ------------------------------
# Issue 13, item 1: the README's line, `pkg-config --cflags --libs
# execinfo_ex_static` (-l:libexecinfo_ex.a), takes the archive from the
# same prefix, with libexecinfo_ex.so beside it (`pkg-config --static
# execinfo_ex` only adds the private libraries: the linker takes the .so).

static_flags=$(pkg "$prefix" --cflags --libs execinfo_ex_static 2>/dev/null || true)
case $static_flags in
    *-l:libexecinfo_ex.a*) ok "pkg-config --cflags --libs execinfo_ex_static: $static_flags" ;;
    *) not_ok "pkg-config --cflags --libs execinfo_ex_static names -l:libexecinfo_ex.a" "got: $static_flags" ;;
esac
if [ -e "$prefix/lib/libexecinfo_ex.so" ]; then
    ok "the prefix has libexecinfo_ex.so beside libexecinfo_ex.a (the case the static line must handle)"
else
    not_ok "the prefix has libexecinfo_ex.so beside libexecinfo_ex.a (the case the static line must handle)"
fi

build user_static "$user_src" $static_flags
if [ -x "$tmp/bin/user_static" ] &&
    ! readelf -d "$tmp/bin/user_static" | grep -q 'NEEDED.*libexecinfo_ex' &&
    nm "$tmp/bin/user_static" | grep -Eq ' T backtrace$'; then
    ok "user_static: backtrace linked in from libexecinfo_ex.a, no libexecinfo_ex.so needed"
else
    not_ok "user_static: backtrace linked in from libexecinfo_ex.a, no libexecinfo_ex.so needed"
fi
run_prog user_static
check_user_program user_static

# Only backtrace + backtrace_symbols_fd: the archive members pulled in are
# those two need. The symbol index must be built all the same.
build fd_only_static "$src/fd_only.c" $static_flags
run_prog fd_only_static
expect_status fd_only_static
if nm "$tmp/bin/fd_only_static" 2>/dev/null | grep -q ' index_at_load$'; then
    has_ctor="the binary has index_at_load"
else
    has_ctor="the binary has no index_at_load: src/symbolize/index.o (its constructor) was not linked"
fi
for function in fd_only_static_leaf fd_only_global_middle main; do
    expect_grep "fd_only_static: backtrace_symbols_fd names $function (static lib, only backtrace + backtrace_symbols_fd called)" \
        "$tmp/out/fd_only_static.out" "^([^ ]*/)?fd_only_static\\($function\\+0x[0-9a-f]+\\)\\[0x[0-9a-f]+\\]\$" \
        "Linked against libexecinfo_ex.a, a program calling only backtrace and backtrace_symbols_fd" \
        "must still get the symbol index built at load by the library's constructor; frames printed" \
        "as path(+0xoffset) mean it was not ($has_ctor)." \
        "The same program linked to the .so (fd_only_dynamic above) is the control."
done

# ---- 4. with libunwind too --------------------------------------------------------
# libunwind.so exports a weak, unversioned backtrace of its own.

build with_libunwind "$src/with_libunwind.c" $cflags_libs -lunwind
if readelf -d "$tmp/bin/with_libunwind" 2>/dev/null | grep -q 'NEEDED.*\[libunwind\.so'; then
    ok "with_libunwind: needs libunwind.so (both libraries really loaded)"
else
    not_ok "with_libunwind: needs libunwind.so (both libraries really loaded)"
fi
run_prog with_libunwind LD_LIBRARY_PATH="$prefix/lib"
expect_status with_libunwind
expect_grep "with_libunwind: dladdr(backtrace) is in libexecinfo_ex, not libunwind" \
    "$tmp/out/with_libunwind.out" '^backtrace-from: .*libexecinfo_ex\.so'
expect_grep "with_libunwind: unw_backtrace works alongside" \
    "$tmp/out/with_libunwind.out" '^unw_backtrace: [1-9][0-9]*$'
expect_grep "with_libunwind: backtrace + backtrace_symbols name the static unwind_static_leaf" \
    "$tmp/out/with_libunwind.out" '^([^ ]*/)?with_libunwind\(unwind_static_leaf\+0x[0-9a-f]+\) \[0x[0-9a-f]+\]$'

# ---- 5. the installed crash wrapper ------------------------------------------------
# It preloads the installed library (its path is compiled in) and keeps the
# program's death: a shell that kills itself with SIGSEGV.
tool_status=0
tool_output=$(timeout 20 "$prefix/bin/execinfo_ex_run" "$TOOL_SH" -c 'kill -SEGV $$' 2>&1) || tool_status=$?
if [ "$tool_status" -eq 139 ] && printf '%s' "$tool_output" | grep -q 'fatal signal 11 (SIGSEGV), code 0 (SI_USER)'; then
    ok "installed execinfo_ex_run: report, and the program's own death (status 139)"
else
    not_ok "installed execinfo_ex_run: report, and the program's own death (status 139)" \
        "status $tool_status" "$(printf '%s' "$tool_output" | head -n 5)"
fi

# Its options are checked with the library's parser before the program runs.
# run_tool NAME INHERITED ARGS...: the installed tool with ARGS in <tmp>/cwd,
# EXECINFO_EX_OPTIONS=INHERITED ("-": unset); out/NAME.{out,err,status}.
tool=$prefix/bin/execinfo_ex_run
mkdir -p "$tmp/cwd"
run_tool() {
    name=$1
    inherited=$2
    shift 2
    if [ "$inherited" = - ]; then
        set -- env -u EXECINFO_EX_OPTIONS "$tool" "$@"
    else
        set -- env EXECINFO_EX_OPTIONS="$inherited" "$tool" "$@"
    fi
    status=0
    # The outer 2>/dev/null: the shell's own "Segmentation fault" line.
    { (cd "$tmp/cwd" && exec timeout 20 "$@") >"$tmp/out/$name.out" 2>"$tmp/out/$name.err" ||
        status=$?; } 2>/dev/null
    echo "$status" >"$tmp/out/$name.status"
    drop_qemu_lines "$tmp/out/$name.err"
}

# expect_refused NAME DESCRIPTION ERE: exit 2, "execinfo_ex_run: " and ERE
# on stderr, and the program (sh -c 'echo ran') not run.
expect_refused() {
    status=$(cat "$tmp/out/$1.status")
    if [ "$status" = 2 ] && ! grep -q ran "$tmp/out/$1.out" &&
        grep -Eq -- "^execinfo_ex_run: .*$3" "$tmp/out/$1.err"; then
        ok "execinfo_ex_run $2: refused, status 2"
    else
        not_ok "execinfo_ex_run $2: refused, status 2" "status $status, want 2 and stderr matching: $3"
        show "$tmp/out/$1.out"
        show "$tmp/out/$1.err"
    fi
}

run_tool tool_bad_inherited bogus=1 "$TOOL_SH" -c 'echo ran'
expect_refused tool_bad_inherited "with EXECINFO_EX_OPTIONS=bogus=1" "unknown option 'bogus'"
run_tool tool_handler_off handler=0 "$TOOL_SH" -c 'echo ran'
expect_refused tool_handler_off "with EXECINFO_EX_OPTIONS=handler=0" "handler=0"
run_tool tool_frames_0 - -f 0 "$TOOL_SH" -c 'echo ran'
expect_refused tool_frames_0 "-f 0" "bad value '0' for option 'frames'"
run_tool tool_signals_lower - -s segv "$TOOL_SH" -c 'echo ran'
expect_refused tool_signals_lower "-s segv" "bad value 'segv' for option 'signals'"
run_tool tool_report_colon - -o 'a:b' "$TOOL_SH" -c 'echo ran'
expect_refused tool_report_colon "-o 'a:b'" "a:b' contains ':'"
if [ -e "$tmp/cwd/a:b" ] || [ -e "$tmp/cwd/a" ]; then
    not_ok "execinfo_ex_run -o 'a:b': no file written" "$(ls "$tmp/cwd")"
else
    ok "execinfo_ex_run -o 'a:b': no file written"
fi

# Issue 13: an existing -o FILE said up front, --overwrite, the heap command.
. "$src/commands.sh"

# handler=1 first, then the inherited options, then the flags (the last wins).
run_tool tool_compose frames=8 -f 16 "$TOOL_SH" -c 'echo "$EXECINFO_EX_OPTIONS"'
if [ "$(cat "$tmp/out/tool_compose.status")" = 0 ] &&
    [ "$(cat "$tmp/out/tool_compose.out")" = handler=1:frames=8:frames=16 ]; then
    ok "execinfo_ex_run -f 16 with EXECINFO_EX_OPTIONS=frames=8: the program gets handler=1:frames=8:frames=16"
else
    not_ok "execinfo_ex_run -f 16 with EXECINFO_EX_OPTIONS=frames=8: the program gets handler=1:frames=8:frames=16" \
        "status $(cat "$tmp/out/tool_compose.status")"
    show "$tmp/out/tool_compose.out"
    show "$tmp/out/tool_compose.err"
fi

# --option NAME=VALUE: any library option, in order with the flags, and
# checked as they are.
run_tool tool_option - -f 16 --option frames=24 -O lines=all "$TOOL_SH" -c 'echo "$EXECINFO_EX_OPTIONS"'
if [ "$(cat "$tmp/out/tool_option.status")" = 0 ] &&
    [ "$(cat "$tmp/out/tool_option.out")" = handler=1:frames=16:frames=24:lines=all ]; then
    ok "execinfo_ex_run -f 16 --option frames=24 -O lines=all: the program gets handler=1:frames=16:frames=24:lines=all"
else
    not_ok "execinfo_ex_run -f 16 --option frames=24 -O lines=all: the program gets handler=1:frames=16:frames=24:lines=all" \
        "status $(cat "$tmp/out/tool_option.status")"
    show "$tmp/out/tool_option.out"
    show "$tmp/out/tool_option.err"
fi
run_tool tool_option_unknown - --option bogus=1 "$TOOL_SH" -c 'echo ran'
expect_refused tool_option_unknown "--option bogus=1" "unknown option 'bogus'"
run_tool tool_option_bare - --option lines "$TOOL_SH" -c 'echo ran'
expect_refused tool_option_bare "--option lines" "--option wants NAME=VALUE"

# A relative -o names a file in the tool's cwd, even when the program moves.
run_tool tool_relative - -o crash.txt "$TOOL_SH" -c 'cd / && kill -SEGV $$'
if [ "$(cat "$tmp/out/tool_relative.status")" = 139 ] &&
    grep -q 'fatal signal 11 (SIGSEGV), code 0 (SI_USER)' "$tmp/cwd/crash.txt" 2>/dev/null; then
    ok "execinfo_ex_run -o crash.txt: report in <cwd>/crash.txt after the program's chdir, status 139"
else
    not_ok "execinfo_ex_run -o crash.txt: report in <cwd>/crash.txt after the program's chdir, status 139" \
        "status $(cat "$tmp/out/tool_relative.status")"
    show "$tmp/cwd/crash.txt"
    show "$tmp/out/tool_relative.err"
fi

# Every thread of a real multi-threaded program: python3 with three
# sleeping threads, dumped by kill -QUIT (--dump-signal) and still alive
# after it, then crashed: both reports list all four threads.
if [ -n "$QEMU_USER" ]; then
    qemu_skip "python3 with 3 threads under execinfo_ex_run --dump-signal=SIGQUIT" \
        "Q3, python3 is the host's (x86-64): the aarch64 library cannot be preloaded into it"
elif command -v python3 >/dev/null 2>&1 && python3 -c 'import ctypes' 2>/dev/null; then
    threads_py='import threading, time, sys, ctypes
for i in range(3):
    threading.Thread(target=time.sleep, args=(30,), daemon=True, name="sleeper").start()
print("ready", flush=True)
sys.stdin.readline()
ctypes.string_at(0)'
    rm -f "$tmp/cwd/threads.txt"
    mkfifo "$tmp/threads_in"
    ( cd "$tmp/cwd" && exec timeout 40 "$tool" --dump-signal=SIGQUIT -o threads.txt \
        python3 -c "$threads_py" <"$tmp/threads_in" >"$tmp/out/threads.out" 2>"$tmp/out/threads.err" ) &
    python_pid=$!
    exec 7>"$tmp/threads_in"
    for i in $(seq 100); do grep -q ready "$tmp/out/threads.out" 2>/dev/null && break; sleep 0.1; done
    kill -QUIT "$(pgrep -P "$python_pid" python3 || echo "$python_pid")" 2>/dev/null || true
    for i in $(seq 100); do grep -q 'end of report' "$tmp/cwd/threads.txt" 2>/dev/null && break; sleep 0.1; done
    alive=no
    kill -0 "$python_pid" 2>/dev/null && alive=yes
    echo >&7
    exec 7>&-
    status=0
    { wait "$python_pid" || status=$?; } 2>/dev/null
    dumps=$(grep -c 'thread dump on signal 3 (SIGQUIT)' "$tmp/cwd/threads.txt" 2>/dev/null || true)
    crashes=$(grep -c 'fatal signal 11 (SIGSEGV)' "$tmp/cwd/threads.txt" 2>/dev/null || true)
    sleepers=$(grep -c '^\*\*\* thread [0-9]* "python3" S (sleeping), [0-9]* frames:$' "$tmp/cwd/threads.txt" 2>/dev/null || true)
    if [ "$alive" = yes ] && [ "$status" = 139 ] && [ "$dumps" = 1 ] && [ "$crashes" = 1 ] &&
        [ "$sleepers" = 6 ]; then
        ok "python3 with 3 threads under execinfo_ex_run --dump-signal=SIGQUIT: a dump of every thread, alive after it; then the crash's report, with every thread, appended; status 139"
    else
        not_ok "python3 with 3 threads under execinfo_ex_run --dump-signal=SIGQUIT: a dump of every thread, alive after it; then the crash's report, with every thread, appended; status 139" \
            "alive after the dump: $alive, status $status, dumps $dumps, crashes $crashes, sleeping threads $sleepers (want 6)"
        show "$tmp/cwd/threads.txt" 60
        show "$tmp/out/threads.err"
    fi
fi

# ---- 6. a real program that loads modules after start-up: python3 + ctypes --------
# ctypes.string_at(0) faults in libc's strlen, called through libffi from
# _ctypes, both dlopen'd by `import ctypes`, long after the library built
# its index. The preloaded library's dlopen refreshes the index, so those
# frames are named as glibc's dladdr names them (ffi_call), not
# path(+0xoffset); _ctypes's own functions too when it has a .symtab.
if [ -n "$QEMU_USER" ]; then
    qemu_skip "python3 ctypes.string_at(0) under the preloaded library" \
        "Q3, python3 is the host's (x86-64): the aarch64 library cannot be preloaded into it"
elif command -v python3 >/dev/null 2>&1 && python3 -c 'import ctypes' 2>/dev/null; then
    status=0
    { env LD_PRELOAD="$prefix/lib/libexecinfo_ex.so" EXECINFO_EX_OPTIONS=handler=1 \
        timeout 20 python3 -c 'import ctypes; ctypes.string_at(0)' \
        >"$tmp/out/python_ctypes.out" 2>"$tmp/out/python_ctypes.err" || status=$?; } 2>/dev/null
    report=$tmp/out/python_ctypes.err
    if [ "$status" = 139 ] && grep -q 'fatal signal 11 (SIGSEGV)' "$report"; then
        ok "python3 ctypes.string_at(0) under the preloaded library: a report, and death by SIGSEGV"
    else
        not_ok "python3 ctypes.string_at(0) under the preloaded library: a report, and death by SIGSEGV" \
            "status $status"
        show "$report"
    fi
    expect_grep "python3 ctypes: the libffi frame is named ffi_call (libffi was dlopen'd after start-up)" \
        "$report" '^#[0-9]+ +[^ ]*libffi\.so[^ (]*\(ffi_call\+0x[0-9a-f]+\) \[0x' \
        "libffi is loaded by 'import ctypes'; path(+0xoffset) for ffi_call means the" \
        "index was not refreshed after that dlopen (src/symbolize/load_watch.c)."
    expect_grep "python3 ctypes: the modules of the trace list _ctypes" \
        "$report" '^  0x[0-9a-f]+-0x[0-9a-f]+ bias 0x[0-9a-f]+ [^ ]*_ctypes[^ ]*\.so build-id '
    ctypes_so=$(python3 -c 'import _ctypes; print(_ctypes.__file__)' 2>/dev/null || true)
    if [ -n "$ctypes_so" ] && readelf -S "$ctypes_so" 2>/dev/null | grep -q '\.symtab'; then
        expect_grep "python3 ctypes: _ctypes frames are named (_ctypes_callproc; $ctypes_so has a .symtab)" \
            "$report" '^#[0-9]+ +[^ ]*_ctypes[^ (]*\.so\(_ctypes_callproc\+0x[0-9a-f]+\) \[0x'
    else
        ok "python3 ctypes: _ctypes has no .symtab here (stripped): its static functions stay path(+0xoffset), as with glibc # SKIP"
    fi
else
    ok "python3 with ctypes not found # SKIP"
fi

echo "integration: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
