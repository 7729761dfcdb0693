#!/bin/sh
# qemu_binfmt.sh: make sure the kernel runs aarch64 programs with
# qemu-aarch64 (binfmt_misc), for make test-aarch64 (tests/aarch64.mk).
#
# The tests run programs of their own (Criterion re-executes the test
# binary for each test; the crash tests run fixtures, the tools, sh -c
# command lines): qemu-user does not follow an execve into another
# program, the kernel does, through binfmt_misc. Debian's qemu-user-binfmt
# ships the registration (/usr/lib/binfmt.d/qemu-aarch64.conf); where
# systemd-binfmt does not run (a container), binfmt_misc is mounted and the
# line written here. QEMU_LD_PREFIX and QEMU_CPU, set by the runner, reach
# every qemu process through the environment.
set -eu
entry=/proc/sys/fs/binfmt_misc/qemu-aarch64
conf=/usr/lib/binfmt.d/qemu-aarch64.conf
[ -e "$entry" ] && exit 0
[ -e /proc/sys/fs/binfmt_misc/register ] ||
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || {
        echo "qemu_binfmt.sh: cannot mount binfmt_misc (needs root)" >&2
        exit 1
    }
[ -e "$entry" ] && exit 0
[ -r "$conf" ] || { echo "qemu_binfmt.sh: $conf missing (apt-get install qemu-user-binfmt)" >&2; exit 1; }
cat "$conf" > /proc/sys/fs/binfmt_misc/register
