#!/usr/bin/env python3
"""Every public function of the libraries says how safe it is, in both
places a user reads: its comment in include/execinfo_ex.h names its
async-signal safety (AS-Safe, Not AS-Safe or AS-Unsafe) and its thread
safety (MT-Safe or MT-Unsafe), and the ATTRIBUTES table of a man page in
man/man3 (its own, or the page that documents it with others) has a "Thread safety" and an "Async-signal safety" row
for it, that agree with the header.

Usage: check_safety.py VERSION_SCRIPT... ; prints one line per failure and
a total, exits 1 on any failure. Names in a version script that are not
functions of the header (interposed libc functions, hook variables) are
left to check_exports.sh."""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEADER = os.path.join(ROOT, "include", "execinfo_ex.h")
MAN3 = os.path.join(ROOT, "man", "man3")


def exported_names(script):
    text = open(script).read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.findall(r"^\s*([A-Za-z_]\w*);", text, flags=re.M)


def header_comments():
    """Function name -> the comment block that documents it (the nearest
    comment above its declaration, declarations in between allowed)."""
    lines = open(HEADER).read().split("\n")
    found, comment, in_comment, current = {}, "", False, []
    for line in lines:
        if in_comment or line.lstrip().startswith("/*"):
            if not in_comment:
                current = []
            current.append(line)
            in_comment = "*/" not in line
            if not in_comment:
                comment = "\n".join(current)
            continue
        match = re.search(r"[\s*]([A-Za-z_]\w*)\(", line)   # not (*variable)(
        if match and not line.startswith("#") and not line.startswith(" "):
            found.setdefault(match.group(1), comment)
    return found


def as_value(text):
    if re.search(r"Not AS-Safe|AS-Unsafe", text):
        return "unsafe"
    return "safe" if "AS-Safe" in text else None


def man_pages():
    """Every page's text, .so links left out (they point at these)."""
    pages = {}
    for entry in sorted(os.listdir(MAN3)):
        text = open(os.path.join(MAN3, entry)).read()
        if not text.startswith(".so "):
            pages[entry] = text
    return pages


def man_attributes(text):
    """(function, attribute) -> value, from the ATTRIBUTES tables."""
    section = re.search(r"^\.SH ATTRIBUTES\n(.*?)(?=^\.SH |\Z)", text, flags=re.S | re.M)
    rows = {}
    if not section:
        return rows
    for names, attribute, value in re.findall(r"T\{\n(.*?)\nT\}\t([^\t\n]+)\t([^\n]+)",
                                              section.group(1), flags=re.S):
        for name in re.findall(r"^\.BR?\s+(\w+)", names, flags=re.M):
            rows[(name, attribute.strip())] = value.strip()
    return rows


def main(scripts):
    comments = header_comments()
    rows = {}
    for text in man_pages().values():
        rows.update(man_attributes(text))
    failures, checked = [], 0
    for script in scripts:
        for name in exported_names(script):
            if name not in comments:
                continue  # not a function of the header
            checked += 1
            comment = comments[name]
            header_as = as_value(comment)
            if header_as is None:
                failures.append(f"{name}: its header comment does not say AS-Safe or not")
            if not re.search(r"MT-(Safe|Unsafe)", comment):
                failures.append(f"{name}: its header comment does not say MT-Safe or MT-Unsafe")
            thread = rows.get((name, "Thread safety"))
            signal = rows.get((name, "Async-signal safety"))
            if thread is None or not re.match(r"MT-(Safe|Unsafe)", thread):
                failures.append(f"{name}: no Thread safety row in its man page's ATTRIBUTES")
            if signal is None or as_value(signal) is None:
                failures.append(f"{name}: no Async-signal safety row in its man page's ATTRIBUTES")
            elif header_as is not None and as_value(signal) != header_as:
                failures.append(f"{name}: the header says AS-{header_as}, the man page {signal}")
    for failure in failures:
        print("not ok - " + failure)
    print(f"safety check: {checked} functions, {len(failures)} failures")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
