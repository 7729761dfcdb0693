#!/usr/bin/env python3
"""The facts of a heap report, read from its text and from its JSON, so a
test can check that both formats say the same (tests/unit/test_hooks.c).

Usage: heap_report_facts.py TEXT_FILE JSON_FILE
Reads the text (a heap report on its own, or a crash report with the heap
section) and the JSON (the heap report object, or the crash report with
its heap_error, heap_fault_block and heap_damaged members); prints the
facts of each and exits 0 when they are equal, 1 when they differ or
either holds no heap fact at all. Addresses are left out (two runs)."""
import json
import re
import sys

# "(name+0x1a)", or "(name+0)" at its first byte (a fault's pc).
FRAME_FUNCTION = re.compile(r"\(([^+()]+)\+0(?:x|\))")


def text_facts(text):
    facts = {"heap_error": None, "fault_block": None, "damaged": []}
    record, stack_key = None, None
    for line in text.split("\n"):
        if stack_key is not None and line.startswith("    inlined: "):
            continue  # the inlined calls inside the frame that follows
        if stack_key is not None and not line.startswith("***"):
            match = FRAME_FUNCTION.search(line)
            record[stack_key] = match.group(1) if match else None
            stack_key = None
            continue
        stack_key = None
        m = re.match(r"\*\*\* execinfo_ex: heap error: (\S+) at 0x[0-9a-f]+ \(found (.+)\)$", line)
        if m:
            record = {"kind": m.group(1), "found": m.group(2), "size": None, "offset": None,
                      "region": None, "access": None, "access_stack": None, "here": None,
                      "allocated": None, "freed": None}
            facts["heap_error"] = record
            continue
        m = re.match(r"\*\*\* (READ|WRITE|EXECUTE|access)(?: of (?:size (\d+)|unknown size))?$", line)
        if m and record is facts["heap_error"] and record is not None:
            record["access"] = {"direction": None if m.group(1) == "access" else m.group(1),
                                "size": int(m.group(2)) if m.group(2) else None}
            continue
        m = re.match(r"\*\*\* block 0x[0-9a-f]+ of (\d+) bytes; the address is at offset (-?\d+)", line)
        if m and record is facts["heap_error"]:
            record["size"], record["offset"] = int(m.group(1)), int(m.group(2))
            continue
        m = re.match(r"\*\*\* block 0x[0-9a-f]+ of unknown size .*offset (-?\d+)$", line)
        if m and record is facts["heap_error"]:
            record["offset"] = int(m.group(1))
            continue
        if line.startswith("*** not a heap block:") and record is facts["heap_error"]:
            record["region"] = "stack" if "stack" in line else "module"
            continue
        m = re.match(r"\*\*\* 0x[0-9a-f]+ (?:is at offset (-?\d+) inside|(\d+) bytes (past the end|before the start) of)"
                     r" a (live|freed) (\d+)-byte block at", line)
        if m:
            size = int(m.group(5))
            if m.group(1) is not None:
                kind, offset = "inside", int(m.group(1))
            elif m.group(3) == "past the end":
                kind, offset = "near", size + int(m.group(2))
            else:
                kind, offset = "near", -int(m.group(2))
            record = {"kind": kind, "size": size, "state": m.group(4), "offset": offset,
                      "allocated": None, "freed": None}
            facts["fault_block"] = record
            continue
        m = re.match(r"\*\*\* (heap-[a-z-]+): (live|freed) (\d+)-byte block at 0x[0-9a-f]+, damaged at offset (-?\d+)$", line)
        if m:
            record = {"kind": m.group(1), "size": int(m.group(3)), "state": m.group(2),
                      "offset": int(m.group(4)), "allocated": None, "freed": None}
            facts["damaged"].append(record)
            continue
        if line.startswith("*** found ") and record is facts["heap_error"]:
            continue  # "found at exit" in words: a line of the error's own
        m = re.match(r"\*\*\* (access|here|allocated|freed)( by thread \d+)?:$", line)
        if m and record is not None:
            stack_key = "access_stack" if m.group(1) == "access" else m.group(1)
            continue
        if line.startswith("***"):
            record = None if not line.startswith("*** pid ") else record
    return facts


def first_function(stack):
    if not stack or not stack.get("frames"):
        return None
    return stack["frames"][0].get("function")


def block_from_json(block):
    return {"kind": block["kind"], "size": block["size"], "state": block["state"],
            "offset": block["offset"], "allocated": first_function(block.get("allocated")),
            "freed": first_function(block.get("freed"))}


def json_facts(document):
    facts = {"heap_error": None, "fault_block": None, "damaged": []}
    error = document.get("heap_error") if "heap_error" in document else (
        document if document.get("format") == "execinfo_ex heap report 1" else None)
    if error is not None:
        facts["heap_error"] = {
            "kind": error["kind"], "found": error["found"], "size": error["size"],
            "offset": error["offset"], "region": error.get("region"),
            "access": error.get("access"),
            "access_stack": first_function(error.get("access_stack")),
            "here": first_function(error.get("here")),
            "allocated": first_function(error.get("allocated")),
            "freed": first_function(error.get("freed"))}
    if document.get("heap_fault_block") is not None:
        facts["fault_block"] = block_from_json(document["heap_fault_block"])
    facts["damaged"] = [block_from_json(b) for b in document.get("heap_damaged", [])]
    return facts


def main(text_path, json_path):
    text = open(text_path, errors="replace").read()
    raw = open(json_path, errors="replace").read()
    document = json.loads(raw[raw.index("{"):raw.rindex("}") + 1])
    from_text, from_json = text_facts(text), json_facts(document)
    print("text:", json.dumps(from_text, sort_keys=True))
    print("json:", json.dumps(from_json, sort_keys=True))
    empty = {"heap_error": None, "fault_block": None, "damaged": []}
    if from_text == empty:
        print("no heap facts in the text")
        return 1
    return 0 if from_text == from_json else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
