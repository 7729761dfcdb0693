#!/usr/bin/env python3
"""inline_cost.py: what issue 15 costs the index of a main executable:
build time and memory with the inlined calls and the demangled names on
and off (inlines=0|1, demangle=0|1; both 0 is the index as it was before).

    inline_cost.py [RUNS] [--before BEFORE_HELPER] HELPER...

Each HELPER is bench/index_cost_helper.c linked with the code to measure
(`make bench-inline` builds two: the -O2 test fixture
tests/fixtures/inline_program.c and a generated C++ program,
bench/gen_inline_cxx.py). Each run is a fresh process with
EXECINFO_EX_OPTIONS=index_cache=0:inlines=N:demangle=M (lines=main, the
default: only the main executable gets lines and inlined calls; every
module's symbols are demangled), the four settings in a rotating order.
Prints the medians of RUNS (default 11) runs:
  build: the index built at load (every module's symbols, the main
         executable's lines and inlined calls), index_cost_helper's load_ns
  mapped: the bytes the index mapped (all modules)
  maxrss: the process's peak resident set (getrusage of the child).

Every run is pinned to one CPU (BENCH_CPU, else the lowest this process
may use): on the 2-core virtual machine of docs/PERFORMANCE.md one CPU ran
the same build 30-35% slower than the other (which one changed within the
hour), so unpinned runs fell in two groups and a median could land in
either. Compare ratios within one run, not times across runs.

--before: the same C++ program linked with the library as it was before
issue 15 (`make bench-inline-before` builds it from commit cb43479, the
issue's "today's"); it runs in the same rotation as the last HELPER, with
index_cache=0 only (it has no inlines= or demangle=), and the table gets
a row for it and a column against it."""
import os
import statistics
import subprocess
import sys


SETTINGS = ((0, 0), (1, 0), (0, 1), (1, 1))  # (inlines, demangle)


BEFORE = "before issue 15"
CPU = int(os.environ.get("BENCH_CPU", min(os.sched_getaffinity(0))))


def run(helper, setting):
    env = dict(os.environ)
    env["EXECINFO_EX_OPTIONS"] = "index_cache=0" if setting == BEFORE else \
        "index_cache=0:inlines=%d:demangle=%d" % setting
    process = subprocess.Popen([helper], env=env, stdout=subprocess.PIPE,
                               preexec_fn=lambda: os.sched_setaffinity(0, {CPU}))
    output = process.stdout.read().decode()
    _, status, usage = os.wait4(process.pid, 0)
    if status != 0:
        sys.exit("%s failed (status %d): %s" % (helper, status, output))
    fields = dict(item.split("=") for item in output.split())
    return float(fields["load_ns"]), int(fields["mapped_bytes"]), int(fields["lines"]), usage.ru_maxrss


def main():
    args = sys.argv[1:]
    runs = 11
    before = None
    if args and args[0].isdigit():
        runs = int(args.pop(0))
    if len(args) > 1 and args[0] == "--before":
        before = args[1]
        args = args[2:]
    print("Runs pinned to CPU %d." % CPU)
    print("| program | inlines | demangle | build at load (ms) | vs both off |%s mapped (KiB) | vs both off | peak RSS (KiB) | line rows |"
          % (" vs before issue 15 |" if before else ""))
    print("| --- | --- | --- | --- | --- |%s --- | --- | --- | --- |" % (" --- |" if before else ""))
    for helper in args:
        settings = list(SETTINGS)
        if before and helper == args[-1]:
            settings.append(BEFORE)
        samples = {setting: [] for setting in settings}
        for i in range(runs):
            for k in range(len(settings)):
                setting = settings[(i + k) % len(settings)]
                samples[setting].append(run(before if setting == BEFORE else helper, setting))
        base_build = statistics.median(x[0] for x in samples[(0, 0)])
        base_mapped = statistics.median(x[1] for x in samples[(0, 0)])
        before_build = statistics.median(x[0] for x in samples[BEFORE]) if BEFORE in samples else None
        for setting in settings:
            s = samples[setting]
            build = statistics.median(x[0] for x in s)
            mapped = statistics.median(x[1] for x in s)
            name, inlines, demangle = os.path.basename(helper), str(setting[0]), str(setting[1])
            if setting == BEFORE:
                name, inlines, demangle = name + " (" + BEFORE + ")", "-", "-"
            against = ""
            if before:
                against = " %.2fx |" % (build / before_build) if before_build else " |"
            print("| %s | %s | %s | %.2f | %.2fx |%s %.1f | %.2fx | %d | %d |" % (
                name, inlines, demangle, build / 1e6, build / base_build, against,
                mapped / 1024.0, mapped / base_mapped,
                statistics.median(x[3] for x in s), s[0][2]))


if __name__ == "__main__":
    main()
