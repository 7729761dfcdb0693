#!/usr/bin/env python3
"""Copy an ELF64 file with its section header table removed (e_shoff,
e_shnum and e_shstrndx zeroed), the way some packers and sstrip ship
binaries: only the program headers are left. Usage: IN OUT."""
import struct
import sys

data = bytearray(open(sys.argv[1], "rb").read())
if data[:4] != b"\x7fELF" or data[4] != 2:
    sys.exit("not an ELF64 file: " + sys.argv[1])
struct.pack_into("<Q", data, 0x28, 0)       # e_shoff
struct.pack_into("<HHH", data, 0x3A, 0, 0, 0)  # e_shentsize, e_shnum, e_shstrndx
open(sys.argv[2], "wb").write(data)
