# cross.mk: the target architecture and its build folder (issue 27).
#
#   make                                    native: build/, the host's libraries
#   make CROSS_COMPILE=aarch64-linux-gnu-   aarch64: build-aarch64/, compiled by
#       aarch64-linux-gnu-gcc against build-aarch64/sysroot (tools/aarch64_sysroot.sh
#       unpacks Debian's arm64 packages there with dpkg -x: libnanomsg5, which
#       Criterion needs, is not Multi-Arch: same, so apt-get install NAME:arm64
#       cannot put the set beside the amd64 one).
#
# ARCH is the one variable that picks the per-architecture files
# (*_x86_64.c, *_aarch64.c beside their generic code; see the Makefile).
# The native build/ is untouched by a cross build, and both can coexist.

CROSS_COMPILE ?=

ifeq ($(CROSS_COMPILE),)
ARCH       := $(shell uname -m)
BUILD      := build
PKG_CONFIG ?= pkg-config
AR         ?= ar
CXX        ?= c++
# A native run needs no qemu; qemu-prefix prints the root for completeness.
QEMU_PREFIX ?= /
else
ARCH       := $(patsubst %-linux-gnu-,%,$(CROSS_COMPILE))
BUILD      := build-$(ARCH)
SYSROOT    ?= $(CURDIR)/$(BUILD)/sysroot
# Command-line CC/CXX/AR still win (make's usual order).
ifeq ($(origin CC),default)
CC         := $(CROSS_COMPILE)gcc
endif
ifeq ($(origin CXX),default)
CXX        := $(CROSS_COMPILE)g++
endif
ifeq ($(origin AR),default)
AR         := $(CROSS_COMPILE)ar
endif
MULTIARCH  := $(ARCH)-linux-gnu
# The unpacked .debs keep Debian's layout: headers in usr/include (and its
# multiarch folder), libraries in usr/lib/$(MULTIARCH) and lib/$(MULTIARCH).
CROSS_FLAGS := -isystem $(SYSROOT)/usr/include -isystem $(SYSROOT)/usr/include/$(MULTIARCH) \
	-L$(SYSROOT)/usr/lib/$(MULTIARCH) -L$(SYSROOT)/lib/$(MULTIARCH) \
	-Wl,-rpath-link,$(SYSROOT)/usr/lib/$(MULTIARCH) -Wl,-rpath-link,$(SYSROOT)/lib/$(MULTIARCH)
CC         += $(CROSS_FLAGS)
CXX        += $(CROSS_FLAGS)
CROSS_PKG_CONFIG_LIBDIR := $(SYSROOT)/usr/lib/$(MULTIARCH)/pkgconfig:$(SYSROOT)/usr/share/pkgconfig
PKG_CONFIG := PKG_CONFIG_SYSROOT_DIR=$(SYSROOT) PKG_CONFIG_LIBDIR=$(CROSS_PKG_CONFIG_LIBDIR) pkg-config
# The directory for qemu-aarch64 -L: the cross libc (libc6-arm64-cross,
# /usr/$(MULTIARCH)) is copied into the sysroot by tools/aarch64_sysroot.sh,
# so that one directory holds the libc and the run-time dependencies.
QEMU_PREFIX ?= $(SYSROOT)
endif

# Included before the Makefile's first rule: keep `all` the default goal.
.DEFAULT_GOAL := all
.PHONY: qemu-prefix
qemu-prefix:
	@echo $(QEMU_PREFIX)
