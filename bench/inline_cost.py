#!/usr/bin/env python3
"""inline_cost.py: what the inlined calls (issue 15) cost the index of a
main executable: build time and memory, inlines=1 against inlines=0.

    inline_cost.py [RUNS] HELPER...

Each HELPER is bench/index_cost_helper.c linked with the code to measure
(`make bench-inline` builds two: the -O2 test fixture
tests/fixtures/inline_program.c and a generated C++ program,
bench/gen_inline_cxx.py). Each run is a fresh process with
EXECINFO_EX_OPTIONS=index_cache=0:inlines=N (lines=main, the default:
only the main executable gets lines and inlined calls), the two settings
alternating. Prints the medians of RUNS (default 11) runs:
  build: the index built at load (every module's symbols, the main
         executable's lines and inlined calls), index_cost_helper's load_ns
  mapped: the bytes the index mapped (all modules)
  maxrss: the process's peak resident set (getrusage of the child)."""
import os
import statistics
import subprocess
import sys


def run(helper, inlines):
    env = dict(os.environ)
    env["EXECINFO_EX_OPTIONS"] = "index_cache=0:inlines=%d" % inlines
    process = subprocess.Popen([helper], env=env, stdout=subprocess.PIPE)
    output = process.stdout.read().decode()
    _, status, usage = os.wait4(process.pid, 0)
    if status != 0:
        sys.exit("%s failed (status %d): %s" % (helper, status, output))
    fields = dict(item.split("=") for item in output.split())
    return float(fields["load_ns"]), int(fields["mapped_bytes"]), int(fields["lines"]), usage.ru_maxrss


def main():
    args = sys.argv[1:]
    runs = 11
    if args and args[0].isdigit():
        runs = int(args.pop(0))
    print("| program | inlines | build at load (ms) | mapped (KiB) | peak RSS (KiB) | line rows |")
    print("| --- | --- | --- | --- | --- | --- |")
    for helper in args:
        samples = {0: [], 1: []}
        for i in range(runs):
            for inlines in ((0, 1) if i % 2 == 0 else (1, 0)):
                samples[inlines].append(run(helper, inlines))
        for inlines in (0, 1):
            s = samples[inlines]
            print("| %s | %d | %.2f | %.1f | %d | %d |" % (
                os.path.basename(helper), inlines,
                statistics.median(x[0] for x in s) / 1e6,
                statistics.median(x[1] for x in s) / 1024.0,
                statistics.median(x[3] for x in s), s[0][2]))


if __name__ == "__main__":
    main()
