#!/usr/bin/env python3
"""Compare the x86-64 instruction walker's access sizes with objdump's
operand widths (BYTE PTR ... ZMMWORD PTR, BCST) over every instruction
of a module's code: a measurement of the decoder's coverage, not a test.
    python3 tests/tools/compare_instruction_sizes.py /lib/x86_64-linux-gnu/libc.so.6"""
import collections
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = os.path.join(tempfile.gettempdir(), "execinfo_ex_instruction_sizes")
subprocess.run(["cc", "-O1", "-I" + os.path.join(HERE, "../../src"), os.path.join(HERE, "instruction_sizes.c"),
                os.path.join(HERE, "../../src/fatal/instruction_x86_64.c"), "-o", DRIVER], check=True)
lib = sys.argv[1]
out = subprocess.run(["objdump","-d","--insn-width=15","-Mintel",lib],capture_output=True,text=True).stdout
SIZES = {"BYTE":1,"WORD":2,"DWORD":4,"QWORD":8,"TBYTE":10,"XMMWORD":16,"OWORD":16,"YMMWORD":32,"ZMMWORD":64}
rows=[]
for l in out.splitlines():
    m = re.match(r"^\s+[0-9a-f]+:\t([0-9a-f ]+)\t(.*)$", l)
    if not m: continue
    asm = m.group(2)
    w = re.search(r"\b(BYTE|WORD|DWORD|QWORD|TBYTE|XMMWORD|OWORD|YMMWORD|ZMMWORD) (PTR|BCST)", asm)
    op = asm.split()[0] if asm.split() else ""
    if op in ("lea","nop") or op.startswith("prefetch") or "bnd" in op or op in("data16","cs","ds"): continue
    if not w: continue
    rows.append((m.group(1).strip(), asm, SIZES[w.group(1)]))
p = subprocess.run([DRIVER], input="\n".join(r[0] for r in rows)+"\n", capture_output=True, text=True).stdout.split()
same=0; unknown=0; wrong=collections.Counter()
for (b,asm,want),got in zip(rows,p):
    got=int(got)
    if got==want: same+=1
    elif got==0: unknown+=1; wrong["unknown "+asm.split()[0]]+=1
    else: wrong["%s %s want %d got %d"%(asm.split()[0], "", want, got)]+=1
print(lib, "instructions with a sized memory operand:", len(rows), "same:", same, "unknown:", unknown, "different:", len(rows)-same-unknown)
for k,v in wrong.most_common(25): print("  ",v,k)
