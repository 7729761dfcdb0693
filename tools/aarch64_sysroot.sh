#!/bin/sh
# aarch64_sysroot.sh DIR: unpack Debian's arm64 packages of the library's
# dependencies into DIR (build-aarch64/sysroot), for the cross compiler and
# for qemu-aarch64 -L (issue 27, cross.mk).
#
# Why .debs and dpkg -x rather than dpkg --add-architecture arm64 with
# apt-get install NAME:arm64: Criterion's libnanomsg5 is not
# "Multi-Arch: same", so it cannot be installed beside its amd64 twin, and
# the native build needs that one. apt-get download needs the arm64 package
# lists, which `dpkg --add-architecture arm64 && apt-get update` fetches
# (adding the architecture installs nothing). libc6:arm64 is unpacked
# too, so that DIR alone is qemu's -L.
set -eu
dir=${1:-build-aarch64/sysroot}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
debs="$dir/../debs"
mkdir -p "$debs"
dpkg --print-foreign-architectures | grep -qx arm64 || {
    dpkg --add-architecture arm64
    apt-get update -qq
}
# The -dev packages, the libraries they link, and what those need at run
# time; libunwind for the reference tests; zlib for the hooks' profiles;
# dash, the shell the integration tests give the installed tools to run
# (a host shell cannot preload the aarch64 library: tests/aarch64.mk, Q3).
packages="libelf-dev:arm64 libelf1:arm64 libdw-dev:arm64 libdw1:arm64
libiberty-dev:arm64 zlib1g:arm64 zlib1g-dev:arm64 liblzma5:arm64 libbz2-1.0:arm64
libzstd1:arm64 liblzma-dev:arm64 libbz2-dev:arm64 libzstd-dev:arm64 libcriterion-dev:arm64 libcriterion3:arm64 libnanomsg5:arm64
libgit2-1.5:arm64 libprotobuf-c1:arm64 libunwind-dev:arm64 libunwind8:arm64
libffi8:arm64 libmbedtls14:arm64 libmbedx509-1:arm64 libmbedcrypto7:arm64
libssh2-1:arm64 libhttp-parser2.9:arm64 libpcre2-8-0:arm64
libssl3:arm64 libgssapi-krb5-2:arm64 libkrb5-3:arm64 libk5crypto3:arm64
libkrb5support0:arm64 libcom-err2:arm64 libkeyutils1:arm64
libstdc++6:arm64 libgcc-s1:arm64 libc6:arm64 libc6-dbg:arm64 dash:arm64"
# Done before with this list: nothing to do.
if [ -f "$dir/.complete" ] && [ "$(cat "$dir/.complete")" = "$packages" ]; then exit 0; fi
(cd "$debs" && apt-get download $packages >/dev/null)
for deb in "$debs"/*.deb; do dpkg -x "$deb" "$dir"; done
# The run-time libc and loader are Debian's libc6:arm64, with its debug
# files (libc6-dbg: /usr/lib/debug/.build-id, which qemu's -L finds under
# DIR) so that libc's local functions are named, as the native tests
# expect of the host's libc. The cross compiler still links against its
# own libc (libc6-arm64-cross, the same glibc 2.36).
# Debian's .pc files name /usr: pkg-config's PKG_CONFIG_SYSROOT_DIR
# prefixes it (cross.mk). Absolute symlinks (libfoo.so -> /lib/...) are
# made relative to DIR so the linker finds them.
find "$dir" -type l | while read -r link; do
    target=$(readlink "$link")
    case $target in /*) ln -sfn "$dir$target" "$link" ;; esac
done
# dash's /bin/sh link is left out: qemu's -L would show it to a guest's
# stat or open of /bin/sh (not to an execve, which runs the host's).
rm -f "$dir/bin/sh"
printf '%s\n' "$packages" > "$dir/.complete"
