# rrxe top-level Makefile.  The two user commands are `make demo` and
# `make test`; `make vm-run CMD='...'` is the interface tests, benchmarks and
# users build on.  Everything heavy is cached under ~/.cache/rrxe (see
# scripts/lib.sh), keyed by kernel version, flavor and config.
#
# FLAVOR=release (default; GCC, what `make bench` measures) or
# FLAVOR=debug (clang-19, KASAN, lockdep, kmemleak, ...): which kernel the
# module is built against and the VM boots.
SHELL := /bin/bash
TOP := $(CURDIR)
FLAVOR ?= release
export FLAVOR
# Resolved once per make invocation: cheap (hashes the fragments).
LIBVARS := $(shell FLAVOR='$(FLAVOR)' bash -c '. $(TOP)/scripts/lib.sh && echo "$$KDIR|$$KMODROOT|$$MODOUT|$$KMAKE_FLAGS"')
ifeq ($(LIBVARS),)
$(error scripts/lib.sh failed (FLAVOR=$(FLAVOR)): see the message above)
endif
KDIR := $(word 1,$(subst |, ,$(LIBVARS)))
KMODROOT := $(word 2,$(subst |, ,$(LIBVARS)))
MODOUT := $(word 3,$(subst |, ,$(LIBVARS)))
KMAKE_FLAGS := $(wordlist 4,9,$(subst |, ,$(LIBVARS)))
TOOLENV := . $(TOP)/scripts/lib.sh && rrxe_toolchain_env
KBUILD := $(MAKE) -s -C $(KDIR) $(KMAKE_FLAGS) M=$(TOP) MO=$(MODOUT)
KO := $(MODOUT)/drivers/infiniband/sw/rrxe/rdma_rrxe.ko
RS_SRCS := $(shell find drivers/infiniband/sw/rrxe samples/rust/*.rs -name '*.rs' -not -path '*/target/*' -not -path '*/fuzz/*' -not -path '*/tests/*' -not -path '*/benches/*')

.PHONY: all setup kernel module samples samples-run progs vm-run demo test test-full host-test vm-test bench fuzz clippy clean help
all: module samples

help:
	@echo "make demo               set up, build kernel+module, boot the VM, show rrxe"
	@echo "make test               every feature, on the release and debug kernels; ends with 'N passed, N failed'"
	@echo "make test-full          the same plus exhaustive matrices and soaks [RRXE_FLAVORS=release: one kernel]"
	@echo "make vm-run CMD='...'   boot the test VM and run CMD as root [FLAVOR=debug]; a selftest runs alone as CMD=tools/testing/selftests/rrxe/DIR/TEST.sh"
	@echo "make vm-test [FLAVOR=debug] [FILTER=DIR/TEST,...]   one flavor's VM selftests"
	@echo "make bench              benchmarks (not tests), ratios in out/bench/summary.txt"
	@echo "make samples-run        the verbs samples on two rrxe devices in the VM, with syscall counts"
	@echo "make fuzz [FUZZ_SECONDS=600]   libFuzzer on the protocol core's parser"
	@echo "make module | kernel | setup | clippy | clean"

setup:
	@bash scripts/setup.sh

kernel: setup
	@bash scripts/kernel.sh >/dev/null

# The module: built out of tree against the cached kernel, then installed
# into the VM's module tree (extra/) so `modprobe rdma_rrxe` works inside.
$(KO): $(RS_SRCS) Kbuild drivers/infiniband/sw/rrxe/Makefile $(KDIR)/arch/x86/boot/bzImage
	@mkdir -p $(MODOUT)
	@$(TOOLENV) && $(KBUILD) modules || { echo "rrxe: error: building rdma_rrxe ($(FLAVOR)) failed (compiler output above)" >&2; exit 1; }
	@$(TOOLENV) && $(KBUILD) INSTALL_MOD_PATH=$(KMODROOT) INSTALL_MOD_DIR=extra modules_install >/dev/null
	@echo "rrxe: built rdma_rrxe.ko ($(FLAVOR))"

$(KDIR)/arch/x86/boot/bzImage:
	@bash scripts/kernel.sh >/dev/null

module: kernel
	@$(MAKE) -s $(KO)

# The samples (samples/): the verbs programs, built on the host into
# out/samples (the VM runs the host's userspace).
samples: setup
	@mkdir -p out/samples
	@$(MAKE) -s -C samples/verbs OUT=$(TOP)/out/samples || { echo "rrxe: error: building samples/verbs failed (compiler output above)" >&2; exit 1; }

samples-run: module samples
	@bash scripts/vm-run.sh "bash samples/verbs/run.sh"

# CMD is passed through the environment unexpanded, so `$?`, `$$x` and
# quotes in it reach the VM's shell exactly as typed.
# The selftests' programs (tools/testing/selftests/rrxe/progs, roce-flood,
# the samples) are built first, so a selftest runs alone as
#   make vm-run CMD=tools/testing/selftests/rrxe/debug/cq.sh FLAVOR=debug
vm-run: export RRXE_VM_CMD := $(value CMD)
vm-run: module progs
	@bash scripts/vm-run.sh

progs: setup
	@bash tools/testing/runner/build-progs.sh

demo: module
	@bash scripts/vm-run.sh "bash tools/testing/demo.sh"

host-test: setup
	@bash tools/testing/runner/host-tests.sh

# One flavor's VM selftests (FILTER: parts of DIR/TEST.sh, comma-separated).
vm-test: module
	@bash tools/testing/runner/vm-tests.sh $(FILTER)

# Both flavors: run-all.sh runs setup (with the kernel sources fetched
# beside it), then builds each kernel and module (the debug one while the
# release VM runs).
test:
	@bash tools/testing/runner/run-all.sh quick $(FILTER)

test-full:
	@bash tools/testing/runner/run-all.sh full $(FILTER)

bench: module
	@bash tools/testing/bench/bench.sh

# Coverage-guided fuzzing of the protocol core (FUZZ_SECONDS, default 600).
fuzz: setup
	@bash tools/testing/fuzz.sh $(FUZZ_SECONDS)

# The module under the kernel's clippy configuration.
clippy: kernel
	@$(TOOLENV) && touch drivers/infiniband/sw/rrxe/rdma_rrxe.rs && $(KBUILD) CLIPPY=1 modules

clean:
	@rm -rf $(MODOUT)
