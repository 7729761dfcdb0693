#!/usr/bin/env python3
"""The leak check on programs we did not write, beside LeakSanitizer
(liblsan preloaded into the same binary) and valgrind --leak-check=full:
a measurement for docs/HEAP_REPORT.md, never run by CI (valgrind takes
minutes). For each program: the totals each tool reports (direct +
indirect, or definitely + indirectly lost) and the leak sites, a site
being the functions of the first three frames above the allocator.

    leak_real_programs.py BUILD_DIR [WORK_DIR]
"""
import os
import re
import subprocess
import sys
from collections import defaultdict

LSAN = "/usr/lib/x86_64-linux-gnu/liblsan.so.0"
FRAMES = 3


def programs(work):
    sql = os.path.join(work, "work.sql")
    with open(sql, "w") as f:
        f.write("create table t(a integer primary key, b text);\n"
                "with recursive c(x) as (select 1 union all select x+1 from c where x<5000) "
                "insert into t select x, hex(randomblob(16)) from c;\n"
                "create index tb on t(b);\nselect count(*), max(length(b)) from t;\n")
    py = os.path.join(work, "work.py")
    with open(py, "w") as f:
        f.write("import json, email.parser, xml.dom.minidom, sqlite3\n"
                "d = {str(i): [i, str(i) * 3] for i in range(20000)}\n"
                "json.loads(json.dumps(d))\n"
                "xml.dom.minidom.parseString(\"<a><b x='1'>t</b></a>\")\n"
                "email.parser.Parser().parsestr('Subject: hi\\n\\nbody')\n"
                "c = sqlite3.connect(':memory:')\nc.execute('create table t(a)')\n"
                "c.executemany('insert into t values (?)', [(i,) for i in range(1000)])\n")
    small = os.path.join(work, "small.c")
    with open(small, "w") as f:
        f.write("int f(int x){return x*2;}\nint main(void){return f(1);}\n")
    here = os.path.dirname(os.path.abspath(__file__))
    return [
        ("python3 (PYTHONMALLOC=malloc)", ["/usr/bin/python3", py], {"PYTHONMALLOC": "malloc"}),
        ("python3 (pymalloc)", ["/usr/bin/python3", py], {}),
        ("git log", ["git", "-C", here, "log", "--oneline", "-20"], {}),
        ("git status", ["git", "-C", here, "status", "--short"], {}),
        ("bash", ["bash", "-c", "declare -A a; for i in $(seq 1 200); do a[$i]=$((i*2)); "
                  "x=\"$x$i\"; done; echo ${#x} ${#a[@]}"], {}),
        ("sqlite3", ["sqlite3", ":memory:", "-init", sql, ".quit"], {}),
        ("gcc's cc1", ["/usr/lib/gcc/x86_64-linux-gnu/12/cc1", "-quiet", small, "-o",
                       os.path.join(work, "small.s")], {}),
    ]


def unnamed(name):
    return "?" if not name or name == "???" else " ".join(name.split())


def ours_frame(line):
    match = re.match(r"^\S+?\((.*)\) \[0x", line)
    if not match:
        return None
    return unnamed(match.group(1).rsplit("+0x", 1)[0])


def lsan_frame(line):
    match = re.match(r"\s*#(\d+) 0x[0-9a-f]+ in (.*?)(?: \(\S+\+0x[0-9a-f]+\)| \S+:\d+(?::\d+)?| \S+)?$",
                     line)
    if match:
        return unnamed(match.group(2)) if match.group(1) != "0" else None
    match = re.match(r"\s*#(\d+) 0x[0-9a-f]+\s+\(", line)
    return "?" if match and match.group(1) != "0" else None


GROUP = re.compile(r"^(Direct|Indirect) leak of (\d+) byte\(s\) in (\d+) object\(s\)")


def read_groups(text, frame):
    sites = defaultdict(lambda: [0, 0])
    lines = text.splitlines()
    for i, line in enumerate(lines):
        match = GROUP.match(line)
        if not match:
            continue
        names = []
        for following in lines[i + 1:]:
            if not following.strip() or GROUP.match(following):
                break
            name = frame(following)
            if name is not None:
                names.append(name)
        site = " < ".join(names[:FRAMES])
        sites[site][0] += int(match.group(2))
        sites[site][1] += int(match.group(3))
    return sites


VALGRIND = re.compile(r"==\d+== ([\d,]+)(?: \(([\d,]+) direct, [\d,]+ indirect\))? bytes in "
                      r"([\d,]+) blocks are (definitely|indirectly) lost")


def read_valgrind(text):
    sites = defaultdict(lambda: [0, 0])
    lines = text.splitlines()
    for i, line in enumerate(lines):
        match = VALGRIND.match(line)
        if not match:
            continue
        names = []
        for following in lines[i + 2:]:   # past "at" (the allocator)
            found = re.match(r"==\d+==    by 0x[0-9A-F]+: (.*) \((?:in .*|[^()]*:\d+)\)$", following)
            if not found:
                break
            names.append(unnamed(found.group(1)))
        site = " < ".join(names[:FRAMES])
        sites[site][0] += int((match.group(2) or match.group(1)).replace(",", ""))
        sites[site][1] += int(match.group(3).replace(",", ""))
    return sites


def run(command, environment):
    result = subprocess.run(command, env=environment, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, errors="replace", timeout=900)
    return result.stderr


def totals(sites):
    return sum(v[0] for v in sites.values()), sum(v[1] for v in sites.values())


def main():
    build = os.path.abspath(sys.argv[1])
    work = sys.argv[2] if len(sys.argv) > 2 else "/tmp/execinfo_ex_leak_real"
    os.makedirs(work, exist_ok=True)
    for name, command, extra in programs(work):
        base = dict(os.environ, **extra)
        base.pop("LD_PRELOAD", None)
        ours = read_groups(run(command, dict(base, LD_PRELOAD=build + "/libexecinfo_ex_hooks.so",
                                              EXECINFO_EX_OPTIONS="leak_check=1")), ours_frame)
        lsan = read_groups(run(command, dict(base, LD_PRELOAD=LSAN, LSAN_OPTIONS=
                                             "fast_unwind_on_malloc=0:exitcode=0")), lsan_frame)
        valgrind = read_valgrind(run(["valgrind", "--leak-check=full",
                                      "--show-leak-kinds=definite,indirect"] + command, base))
        print("== %s: bytes/blocks leaked: ours %d/%d, LSan %d/%d, valgrind %d/%d" %
              ((name,) + totals(ours) + totals(lsan) + totals(valgrind)))
        for site in sorted(set(ours) | set(lsan) | set(valgrind)):
            row = [ours.get(site), lsan.get(site), valgrind.get(site)]
            same = row[0] == row[1] == row[2]
            print("   %s %-90.90s ours %-12s LSan %-12s valgrind %s" % (
                "=" if same else "!", site,
                *["%d/%d" % tuple(v) if v else "-" for v in row]))


if __name__ == "__main__":
    main()
