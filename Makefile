# rrxe top-level Makefile.  The two user commands are `make demo` and
# `make test`; `make vm-run CMD='...'` is the interface tests, benchmarks and
# users build on.  Everything heavy is cached under ~/.cache/rrxe (see
# scripts/lib.sh), keyed by kernel version and config.
SHELL := /bin/bash
TOP := $(CURDIR)
# Resolved once per make invocation: cheap (hashes one file).
KDIR := $(shell bash -c '. $(TOP)/scripts/lib.sh; echo $$KDIR')
KMODROOT := $(shell bash -c '. $(TOP)/scripts/lib.sh; echo $$KMODROOT')
TOOLENV := . $(TOP)/scripts/lib.sh && rrxe_toolchain_env
KO := drivers/infiniband/sw/rrxe/rdma_rrxe.ko
RS_SRCS := $(shell find drivers/infiniband/sw/rrxe -name '*.rs' -not -path '*/target/*' -not -path '*/fuzz/*' -not -path '*/tests/*' -not -path '*/benches/*')

.PHONY: all setup kernel module vm-run demo test host-test vm-test bench fuzz clippy clean help
all: module

help:
	@echo "make demo               set up, build kernel+module, boot the VM, show rrxe"
	@echo "make test               run every test; ends with 'N passed, N failed'"
	@echo "make vm-run CMD='...'   boot the test VM and run CMD as root"
	@echo "make bench              benchmarks (not tests), ratios in out/bench/summary.txt"
	@echo "make fuzz [FUZZ_SECONDS=600]   libFuzzer on the protocol core's parser"
	@echo "make module | kernel | setup | clippy | clean"

setup:
	@bash scripts/setup.sh

kernel: setup
	@bash scripts/kernel.sh >/dev/null

# The module: built out of tree against the cached kernel, then installed
# into the VM's module tree (extra/) so `modprobe rdma_rrxe` works inside.
$(KO): $(RS_SRCS) Kbuild drivers/infiniband/sw/rrxe/Makefile $(KDIR)/arch/x86/boot/bzImage
	@$(TOOLENV) && $(MAKE) -s -C $(KDIR) M=$(TOP) modules
	@$(TOOLENV) && $(MAKE) -s -C $(KDIR) M=$(TOP) INSTALL_MOD_PATH=$(KMODROOT) INSTALL_MOD_DIR=extra modules_install >/dev/null
	@echo "rrxe: built $(KO)"

$(KDIR)/arch/x86/boot/bzImage:
	@bash scripts/kernel.sh >/dev/null

module: kernel
	@$(MAKE) -s $(KO)

# CMD is passed through the environment unexpanded, so `$?`, `$$x` and
# quotes in it reach the VM's shell exactly as typed.
vm-run: export RRXE_VM_CMD := $(value CMD)
vm-run: module
	@bash scripts/vm-run.sh

demo: module
	@bash scripts/vm-run.sh "bash tools/testing/demo.sh"

host-test: setup
	@bash tools/testing/host-tests.sh

vm-test: module
	@bash tools/testing/vm-tests.sh

test: module
	@bash tools/testing/run-all.sh

bench: module
	@bash tools/testing/bench.sh

# Coverage-guided fuzzing of the protocol core (FUZZ_SECONDS, default 600).
fuzz: setup
	@bash tools/testing/fuzz.sh $(FUZZ_SECONDS)

# The module under the kernel's clippy configuration.
clippy: kernel
	@$(TOOLENV) && touch drivers/infiniband/sw/rrxe/rdma_rrxe.rs && $(MAKE) -s -C $(KDIR) M=$(TOP) CLIPPY=1 modules

clean:
	@$(TOOLENV) && $(MAKE) -s -C $(KDIR) M=$(TOP) clean 2>/dev/null || true
