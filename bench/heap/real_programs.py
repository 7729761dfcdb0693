#!/usr/bin/env python3
"""real_programs.py: programs we did not write, run whole under the hooks
library (issue 14's "real programs" target: at most 2x each with the
defaults), side by side with plain and heap=0 in the same run.

    real_programs.py [RUNS] BUILD_DIR

Workloads (each in a scratch directory made once):
  bash    /bin/bash running a malloc-bound script (an array of 20,000
          strings built, then joined)
  make    make -s -j2 of 24 small C units (make, sh, cc, cc1, as, ld: every
          process preloaded), objects removed before each run
  g++     g++ -O2 -c of a generated file of about 2,600 lines of templates
          (bench/cxx/gen_templates.py): cc1plus allocates all the time
  python  python3 -m test test_json test_difflib test_textwrap
          (PYTHONMALLOC=malloc; needs Debian's libpython3.11-testsuite,
          else the row is skipped)
Contenders: plain; LD_PRELOAD of the hooks library with heap=0; with the
defaults (full recording). RUNS (default 3) rounds, the contenders'
order rotating each round; prints the medians of wall time (fork to
wait4) and the ratios to plain. Every run must exit 0; the bash and make
outputs must equal plain's."""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BASH_SCRIPT = r'''
a=()
for ((i = 0; i < 20000; i++)); do a+=("item $i of the array"); done
s=""
for x in "${a[@]}"; do s+="$x;"; done
echo "${#a[@]} ${#s}"
'''


def make_units(directory):
    for i in range(24):
        with open(os.path.join(directory, "unit%02d.c" % i), "w") as f:
            for j in range(40):
                f.write("int unit%02d_f%02d(int x) { int s = 0; for (int k = 0; k < x; k++) "
                        "s += k * %d ^ (s >> 3); return s; }\n" % (i, j, j + 1))
    objects = " ".join("unit%02d.o" % i for i in range(24))
    with open(os.path.join(directory, "Makefile"), "w") as f:
        f.write("all: %s\n%%.o: %%.c\n\tcc -O2 -c $< -o $@\n" % objects)


def workloads(scratch, source_root):
    bash_dir = os.path.join(scratch, "bash")
    make_dir = os.path.join(scratch, "make")
    cxx_dir = os.path.join(scratch, "cxx")
    for d in (bash_dir, make_dir, cxx_dir):
        os.makedirs(d, exist_ok=True)
    make_units(make_dir)
    cxx_source = os.path.join(cxx_dir, "templates.cc")
    subprocess.run([sys.executable, os.path.join(source_root, "bench/cxx/gen_templates.py"),
                    cxx_source, "60"], check=True, stdout=subprocess.DEVNULL)
    result = [
        ("bash", ["/bin/bash", "-c", BASH_SCRIPT], bash_dir, {}, True, None),
        ("make -j2, 24 units", ["make", "-s", "-j2"], make_dir, {}, True,
         lambda: [os.remove(os.path.join(make_dir, n)) for n in os.listdir(make_dir)
                  if n.endswith(".o")]),
        ("g++ -O2, 2,600 lines of templates", ["g++", "-O2", "-c", cxx_source, "-o",
                                               os.path.join(cxx_dir, "t.o")], cxx_dir, {}, False, None),
    ]
    probe = subprocess.run(["/usr/bin/python3", "-c", "import test.test_json"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if probe.returncode == 0:
        result.append(("python3 -m test (json, difflib, textwrap)",
                       ["/usr/bin/python3", "-m", "test", "-q", "test_json", "test_difflib",
                        "test_textwrap"], scratch, {"PYTHONMALLOC": "malloc"}, False, None))
    else:
        print("(python's test modules are not installed: libpython3.11-testsuite; row skipped)")
    return result


def run_once(argv, cwd, env_extra, preload, options, reset):
    if reset:
        reset()
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    env.pop("EXECINFO_EX_OPTIONS", None)
    env.update(env_extra)
    if preload:
        env["LD_PRELOAD"] = preload
    if options is not None:
        env["EXECINFO_EX_OPTIONS"] = options
    start = time.monotonic()
    done = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = time.monotonic() - start
    if done.returncode != 0:
        sys.exit("%s failed (%d) under %s %s:\n%s" % (argv[0], done.returncode, preload, options,
                                                       done.stderr.decode(errors="replace")[-2000:]))
    return elapsed, done.stdout


def main():
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args else 2
    runs = 3
    if args[0].isdigit():
        runs = int(args.pop(0))
    build = os.path.abspath(args[0])
    hooks = os.path.join(build, "libexecinfo_ex_hooks.so")
    if not os.path.exists(hooks):
        sys.exit("real_programs.py: %s is missing (make all)" % hooks)
    source_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    contenders = [("plain", None, None), ("hooks heap=0", hooks, "heap=0"),
                  ("hooks, defaults", hooks, None)]
    scratch = tempfile.mkdtemp(prefix="real_programs.")
    try:
        rows = workloads(scratch, source_root)
        print("| program | plain | hooks `heap=0` | hooks, defaults |")
        print("| --- | ---: | ---: | ---: |")
        for name, argv, cwd, env_extra, compare, reset in rows:
            times = {c[0]: [] for c in contenders}
            expected = None
            for r in range(runs):
                for k in range(len(contenders)):
                    label, preload, options = contenders[(r + k) % len(contenders)]
                    elapsed, out = run_once(argv, cwd, env_extra, preload, options, reset)
                    times[label].append(elapsed)
                    if compare and label == "plain":
                        expected = out
                    elif compare and expected is not None and out != expected:
                        sys.exit("%s: output under %s differs from plain's" % (name, label))
                print("  %s: round %d of %d" % (name, r + 1, runs), file=sys.stderr)
            plain = statistics.median(times["plain"])
            cells = ["%.3f s" % plain]
            for label, _, _ in contenders[1:]:
                m = statistics.median(times[label])
                cells.append("%.3f s (%.2fx)" % (m, m / plain))
            print("| %s | %s |" % (name, " | ".join(cells)))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
