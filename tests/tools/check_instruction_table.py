#!/usr/bin/env python3
"""Check that the rows of tests/unit/internal_instruction_x86_64.c encode
what their comments say: each row's bytes are disassembled with objdump
(Intel syntax) and compared with its mnemonic. The sizes stay written by
hand; this only keeps the bytes honest. Run by hand:
    python3 tests/tools/check_instruction_table.py"""
import re
import subprocess
import sys
import tempfile

SOURCE = "tests/unit/internal_instruction_x86_64.c"
M8 = "0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11"
ROW = re.compile(r'^\s*\{ "([^"]+)", (\d+), \{ ([^}]*) \}, (\d+) \},', re.M)


def disassemble(code):
    with tempfile.NamedTemporaryFile(suffix=".bin") as f:
        f.write(bytes(code))
        f.flush()
        out = subprocess.run(["objdump", "-D", "-b", "binary", "-mi386:x86-64", "-Mintel", f.name],
                             capture_output=True, text=True, check=True).stdout
    lines = [l.split("\t") for l in out.splitlines() if re.match(r"^\s+0:", l)]
    return " ".join(lines[0][2].split()) if lines and len(lines[0]) > 2 else "?"


def main():
    bad = 0
    for mnemonic, length, code, size in ROW.findall(open(SOURCE).read()):
        values = [int(v.strip(), 0)
                  for v in code.replace("M8", M8).split(",") if v.strip()]
        values += [0] * (int(length) - len(values))
        got = disassemble(values[:int(length)])
        if got.replace(" ", "") != mnemonic.replace(" ", ""):
            print(f"{mnemonic!r}: objdump says {got!r}")
            bad += 1
    print("mismatches:", bad)
    return 1 if bad else 0


sys.exit(main())
