#!/usr/bin/env python3
"""budget_report.py: the per-call budget of the hooks library's malloc and
free from a callgrind profile (bench/heap/budget.sh makes it).

Reads a callgrind.out file written with --separate-callers=N (each
function's name is then the function followed by up to N callers, joined by
apostrophes) and prints, in instructions (Ir) per call of the entry point:

  - for malloc and for free, the split by part: entry (the hooks' own
    bookkeeping: everything not in a part below), walk, depot, block set,
    guards and fill, quarantine, eviction, glibc's allocator;
  - the inclusive Ir per call of the main functions, each under malloc and
    under free, with their call counts.

A part is the inclusive cost of its functions where they are called under
the entry point, less the parts nested inside them (so that the parts add
up to the entry point's inclusive cost); a part marked "whole" keeps what
is nested inside it. Usage: budget_report.py callgrind.out [hooks object]
"""
import collections
import re
import sys

# (part, functions, keeps what is nested inside it). Order is print order.
PARTS = [
    ("walk", ["backtrace_skip_range", "backtrace_from_caller"], False),
    ("depot", ["heap_capture"], False),  # less the walk: recent stacks, stack_depot_put, thread id
    ("block set", ["block_set_insert", "block_set_contains", "block_set_remove"], False),
    ("guards and fill", ["block_prepare", "block_fill", "block_read", "block_claim_free",
                         "block_finish_free", "heap_check_block", "block_guards_damaged",
                         "block_fill_changed", "block_real_size", "block_front", "block_resize"],
     False),
    ("quarantine", ["quarantine_push_batched", "quarantine_push"], False),
    ("eviction", ["evict"], True),  # an older block: its checks, its removal, glibc's free
    ("glibc", ["malloc", "free", "calloc", "realloc", "memalign", "__libc_malloc", "__libc_free",
               "__libc_calloc", "__libc_memalign", "_int_malloc", "_int_free", "memset",
               "__memset_avx2_unaligned_erms", "__memset_evex_unaligned_erms"], True),
]

PART_NOTES = {
    "entry": "the hooks' own code: wrappers, heap_ready, heap_busy, the real-size sums",
    "walk": "backtrace_from_caller (or backtrace_skip_range): the DWARF walk with the thread's memo",
    "depot": "heap_capture less the walk: recent-stacks cache, stack_depot_put, thread id",
    "block set": "block_set_insert / _contains / _remove",
    "guards and fill": "block header, guards, fill and their checks",
    "quarantine": "quarantine_push_batched (the thread's batch, then the shared ring), less the evictions it makes",
    "eviction": "evict: an older block leaves the quarantine (checks, set removal, glibc free)",
    "glibc": "glibc's malloc / free / memset called directly",
}

FUNCTIONS = ["malloc", "free", "heap_allocate", "allocate_recorded", "heap_release",
             "release_recorded", "heap_capture", "backtrace_from_caller",
             "walk_memo_replay_caller", "backtrace_skip_range", "walk_from_here",
             "stack_walk_step", "stack_walk_begin_caller", "stack_depot_hash",
             "stack_depot_put_hashed", "block_set_insert", "block_set_contains",
             "block_set_remove", "block_prepare", "block_fill", "block_read", "block_claim_free",
             "block_finish_free", "heap_check_block", "block_guards_damaged",
             "block_fill_changed", "quarantine_push_batched", "quarantine_push", "evict",
             "__libc_malloc", "__libc_free"]

ENTRIES = ["malloc", "free"]
COMPRESSED = re.compile(r"\((\d+)\)(?: (.*))?$")
SPACE = {"ob": "ob", "cob": "ob", "fl": "fl", "fi": "fl", "fe": "fl", "cfi": "fl", "cfl": "fl",
         "fn": "fn", "cfn": "fn"}


def parse(path):
    """Self cost and outgoing calls of every (object, name) context."""
    names = {"ob": {}, "fl": {}, "fn": {}}
    self_cost = collections.Counter()
    calls = collections.defaultdict(lambda: [0, 0])  # (caller, callee) -> [count, inclusive]
    position_columns = 1
    current = None
    current_ob = call_ob = None
    pending = None  # (callee key, count): the next cost line is the call's

    def resolve(space, value):
        match = COMPRESSED.match(value)
        if not match:
            return value
        if match.group(2) is not None:
            names[space][match.group(1)] = match.group(2)
            return match.group(2)
        return names[space].get(match.group(1), "?")

    with open(path, errors="replace") as profile:
        for line in profile:
            line = line.rstrip("\n")
            if not line or line[0] == "#":
                continue
            head = line[0]
            if head.isdigit() or head in "+-*":
                fields = line.split()
                cost = int(fields[position_columns]) if len(fields) > position_columns else 0
                if pending is not None:
                    entry = calls[(current, pending[0])]
                    entry[0] += pending[1]
                    entry[1] += cost
                    pending = None
                    call_ob = current_ob  # a cob= names one call's object only
                elif current is not None:
                    self_cost[current] += cost
                continue
            if line.startswith("positions:"):
                position_columns = len(line.split()) - 1
                continue
            key, sep, value = line.partition("=")
            if not sep:
                continue
            if key in SPACE:
                value = resolve(SPACE[key], value)
            if key == "ob":
                current_ob = value
            elif key == "fn":
                current = (current_ob, value)
                call_ob = current_ob
            elif key == "cob":
                call_ob = value
            elif key == "cfn":
                callee = (call_ob, value)
            elif key == "calls":
                pending = (callee, int(value.split()[0]))
    return self_cost, calls


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    hooks_object = sys.argv[2] if len(sys.argv) > 2 else "libexecinfo_ex_hooks"
    self_cost, calls = parse(sys.argv[1])
    contexts = set(self_cost) | {caller for caller, _ in calls} | {callee for _, callee in calls}
    inclusive = collections.Counter(self_cost)
    called = collections.Counter()
    for (caller, callee), (count, cost) in calls.items():
        inclusive[caller] += cost
        called[callee] += count

    part_of = {}
    for part, functions, _ in PARTS:
        for function in functions:
            part_of.setdefault(function, part)
    keeps_nested = {part for part, _, whole in PARTS if whole}

    def is_entry(context, entry):
        return context[1].split("'")[0] == entry and hooks_object in (context[0] or "")

    # glibc's malloc and free have the entry points' names: in a chain, the
    # entry point is the one whose caller is not the hooks library's own.
    hooks_functions = {c[1].split("'")[0] for c in contexts if hooks_object in (c[0] or "")}

    def entry_depth(chain, entry):
        for i in range(1, len(chain)):
            if chain[i] == entry and (i + 1 == len(chain) or chain[i + 1] not in hooks_functions):
                return i
        return None

    for entry in ENTRIES:
        entry_contexts = [c for c in contexts if is_entry(c, entry)]
        count = sum(called[c] for c in entry_contexts)
        total = sum(inclusive[c] for c in entry_contexts)
        if count == 0:
            print(f"\n{entry}: not called in this profile")
            continue
        parts = collections.Counter()
        functions = collections.defaultdict(lambda: [0, 0])
        for context in contexts:
            chain = context[1].split("'")
            depth = entry_depth(chain, entry)
            if depth is None:
                continue
            # The hooks' entry point, not glibc's function of the same name.
            if chain[0] in FUNCTIONS and (chain[0] not in ENTRIES or depth > 0):
                functions[chain[0]][0] += called[context]
                functions[chain[0]][1] += inclusive[context]
            part = part_of.get(chain[0])
            if part is None:
                continue
            if part == "glibc" and hooks_object in (context[0] or ""):
                continue  # a name shared with glibc, here the hooks' own (a nested entry)
            enclosing = [part_of[f] for f in chain[1:depth] if f in part_of]
            if any(p in keeps_nested for p in enclosing):
                continue  # inside a part that keeps it
            if part == "glibc" and enclosing:
                continue  # glibc called by a part (the fill's memset) is that part's
            parts[part] += inclusive[context]
            if enclosing:
                parts[enclosing[0]] -= inclusive[context]
        parts["entry"] = total - sum(parts.values())
        print(f"\n### {entry}: {count} calls, {total / count:.0f} Ir per call (inclusive)\n")
        print("| part | Ir per call | share | what |")
        print("| --- | ---: | ---: | --- |")
        for part in ["entry"] + [p for p, _, _ in PARTS]:
            print(f"| {part} | {parts[part] / count:.0f} | {100 * parts[part] / total:.0f}% "
                  f"| {PART_NOTES[part]} |")
        print(f"| total | {total / count:.0f} | 100% | inclusive cost of {entry} |")
        print(f"\nMain functions under {entry}: calls, and inclusive Ir per call of each "
              f"(per call of the function, not of {entry}):\n")
        print("| function | calls | calls per call of " + entry + " | Ir per call |")
        print("| --- | ---: | ---: | ---: |")
        for name in FUNCTIONS:
            if name == entry or name not in functions or functions[name][0] == 0:
                continue
            n, cost = functions[name]
            print(f"| {name} | {n} | {n / count:.2f} | {cost / n:.0f} |")


if __name__ == "__main__":
    main()
