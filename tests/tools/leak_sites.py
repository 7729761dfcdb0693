#!/usr/bin/env python3
"""Leaked bytes and objects per allocation site, as three tools report them.

    leak_sites.py --sources a.c,b.c --ours F [--json F] [--lsan F] [--valgrind F]

reads execinfo_ex's leak report (text, and JSON when given), LeakSanitizer's
report (run with fast_unwind_on_malloc=0, so that its stacks go through
libstdc++) and valgrind's (--leak-check=full --show-leak-kinds=definite,indirect),
and names each group's site by its first frame in one of the SOURCES
(basename:line; inlined frames count). It prints the table and exits 1
unless, for every site: ours equal LSan's direct and indirect bytes and
objects, ours in all equal valgrind's definitely plus indirectly lost, and
the JSON says what the text says."""
import argparse
import json
import re
import sys
from collections import defaultdict


def site_of(lines, sources):
    for line in lines:
        for match in re.finditer(r"([\w./+-]+):(\d+)", line):
            name = match.group(1).rsplit("/", 1)[-1]
            if name in sources:
                return "%s:%s" % (name, match.group(2))
    return "?"


def add(table, site, direct, size, objects):
    row = table[site]
    row[0 if direct else 2] += size
    row[1 if direct else 3] += objects


GROUP = re.compile(r"^(Direct|Indirect) leak of (\d+) byte\(s\) in (\d+) object\(s\) allocated from:")


def read_groups(text, sources, frame_line):
    """Ours and LSan's: a group line, then its frames until a blank line."""
    table = defaultdict(lambda: [0, 0, 0, 0])
    lines = text.splitlines()
    for i, line in enumerate(lines):
        match = GROUP.match(line.strip())
        if not match:
            continue
        frames = []
        for following in lines[i + 1:]:
            if not following.strip() or GROUP.match(following.strip()):
                break
            if frame_line(following):
                frames.append(following)
        add(table, site_of(frames, sources), match.group(1) == "Direct",
            int(match.group(2)), int(match.group(3)))
    return table


def read_ours(path, sources):
    return read_groups(open(path).read(), sources, lambda line: True)


def read_lsan(path, sources):
    # Frame #0 is LSan's own malloc; frames in the program follow.
    return read_groups(open(path).read(), sources,
                       lambda line: re.match(r"\s*#\d+ ", line) is not None)


def read_json(path, sources):
    """The JSON report: frames carry file and line."""
    table = defaultdict(lambda: [0, 0, 0, 0])
    text = open(path).read()
    start = text.index("{\"format\":\"execinfo_ex leak report")
    report, _ = json.JSONDecoder().raw_decode(text[start:])
    for leak in report["leaks"]:
        frames = []
        for frame in (leak["allocated"] or {}).get("frames", []):
            for inlined in frame.get("inlined", []) or []:
                frames.append("%s:%s" % (inlined.get("file"), inlined.get("line")))
            frames.append("%s:%s" % (frame.get("file"), frame.get("line")))
        add(table, site_of(frames, sources), leak["kind"] == "direct", leak["bytes"],
            leak["objects"])
    return table, report


VALGRIND = re.compile(r"==\d+== ([\d,]+)(?: \(([\d,]+) direct, [\d,]+ indirect\))? bytes in "
                      r"([\d,]+) blocks are (definitely|indirectly) lost")


def read_valgrind(path, sources):
    table = defaultdict(lambda: [0, 0, 0, 0])
    lines = open(path).read().splitlines()
    for i, line in enumerate(lines):
        match = VALGRIND.match(line)
        if not match:
            continue
        size = int((match.group(2) or match.group(1)).replace(",", ""))
        frames = []
        for following in lines[i + 1:]:
            if not re.match(r"==\d+==    (at|by) ", following):
                break
            frames.append(following)
        add(table, site_of(frames, sources), match.group(4) == "definitely", size,
            int(match.group(3).replace(",", "")))
    return table


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sources", required=True)
    parser.add_argument("--ours", required=True)
    parser.add_argument("--json")
    parser.add_argument("--lsan")
    parser.add_argument("--valgrind")
    args = parser.parse_args()
    sources = set(args.sources.split(","))
    ours = read_ours(args.ours, sources)
    tables = {"ours": ours}
    problems = []
    if args.json:
        tables["json"], _ = read_json(args.json, sources)
        if dict(tables["json"]) != dict(ours):
            problems.append("the JSON report differs from the text")
    if args.lsan:
        tables["lsan"] = read_lsan(args.lsan, sources)
    if args.valgrind:
        tables["valgrind"] = read_valgrind(args.valgrind, sources)
    sites = sorted(set().union(*[set(t) for t in tables.values()]))
    print("%-28s %-9s %12s %12s %12s %12s" % ("site", "tool", "direct B", "direct N",
                                              "indirect B", "indirect N"))
    for site in sites:
        for name, table in tables.items():
            row = table.get(site, [0, 0, 0, 0])
            print("%-28s %-9s %12d %12d %12d %12d" % (site, name, *row))
        mine = ours.get(site, [0, 0, 0, 0])
        if "lsan" in tables and tables["lsan"].get(site, [0, 0, 0, 0]) != mine:
            problems.append("%s: ours %s, LSan %s" % (site, mine, tables["lsan"].get(site)))
        if "valgrind" in tables:
            theirs = tables["valgrind"].get(site, [0, 0, 0, 0])
            if (mine[0] + mine[2], mine[1] + mine[3]) != (theirs[0] + theirs[2], theirs[1] + theirs[3]):
                problems.append("%s: ours %s, valgrind %s (definitely + indirectly lost)" %
                                (site, mine, theirs))
    if "?" in sites:
        problems.append("a leak with no frame in %s" % ",".join(sorted(sources)))
    for problem in problems:
        print("MISMATCH: " + problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
