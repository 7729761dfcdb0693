# tests/aarch64.mk: make test-aarch64 (issue 27) builds the aarch64 tree
# (build-aarch64/, cross.mk) and runs its unit, crash and integration
# tests under qemu-aarch64 -cpu max (pointer authentication), with
# build-aarch64/sysroot as qemu's -L. The native `make test` never needs
# the cross tools. The test programs run other aarch64 programs, so the
# kernel must hand them to qemu: tests/aarch64/qemu_binfmt.sh.

AARCH64_CROSS := aarch64-linux-gnu-
AARCH64_DIR   := build-aarch64

test-aarch64: all
	sh tools/aarch64_sysroot.sh $(AARCH64_DIR)/sysroot
	sh tests/aarch64/qemu_binfmt.sh
	$(MAKE) --no-print-directory CROSS_COMPILE=$(AARCH64_CROSS) qemu-tests
	sh tests/arch/compare.sh
	sh tests/aarch64/readme.sh

ifeq ($(ARCH),aarch64)
QEMU_LOGS := $(CURDIR)/$(BUILD)/qemu-logs
# The tools the tests run on the programs they built (binutils, cc) are
# the target's: found first in PATH under their plain names.
QEMU_TOOLS := $(CURDIR)/$(BUILD)/qemu-tools
QEMU_ENV  := PATH=$(QEMU_TOOLS):$(PATH) QEMU_LD_PREFIX=$(QEMU_PREFIX) QEMU_CPU=max \
	FIXTURE_LIB=$(CURDIR)/$(BUILD)/tests/fixture_lib.so \
	EXECINFO_EX_LIBRARY=$(CURDIR)/$(SHARED) EXECINFO_EX_TESTS=$(CURDIR)/$(BUILD)/tests \
	EXECINFO_EX_BUILD=$(CURDIR)/$(BUILD) EXECINFO_EX_RUN=$(CURDIR)/$(BUILD)/bin/execinfo_ex_run

# Left out under qemu-user 7.2, each for what qemu does not give (never
# because it fails); docs/DECISIONS.md lists them too.
QEMU_SKIP :=
QEMU_UNIT := $(filter-out $(addprefix $(BUILD)/tests/,$(QEMU_SKIP)),$(API_TESTS) $(INTERNAL_TESTS) $(HOOKS_TESTS))

define qemu_test
	@echo "== qemu-aarch64: $(notdir $(1))"; env $(QEMU_ENV) qemu-aarch64 -cpu max -L $(QEMU_PREFIX) \
	  $(1) --jobs 2 --timeout 120 $(if $(QEMU_FILTER_$(notdir $(1))),--filter '$(QEMU_FILTER_$(notdir $(1)))') \
	  > $(QEMU_LOGS)/$(notdir $(1)).out 2>&1; echo $$? > $(QEMU_LOGS)/$(notdir $(1)).status; \
	  grep -v -E '^\[(RUN |PASS)\]' $(QEMU_LOGS)/$(notdir $(1)).out | tail -n 30

endef

$(QEMU_TOOLS):
	@mkdir -p $@
	for tool in objcopy strip readelf nm addr2line objdump gcc g++; do \
	  ln -sf "$$(command -v $(CROSS_COMPILE)$$tool)" $@/$$tool; done
	ln -sf gcc $@/cc; ln -sf g++ $@/c++

qemu-tests: all $(QEMU_UNIT) $(QEMU_TOOLS)
	@rm -rf $(QEMU_LOGS) && mkdir -p $(QEMU_LOGS)
	@echo "== qemu-aarch64: $(words $(QEMU_UNIT)) test binaries (left out: $(or $(QEMU_SKIP),none))"
	$(foreach t,$(QEMU_UNIT),$(call qemu_test,$(t)))
	@sh tests/sanitize/check_logs.sh $(QEMU_LOGS)
endif

.PHONY: test-aarch64 qemu-tests
