#!/usr/bin/env bash
# Install everything rrxe needs on a Debian 12 host; a quick no-op when
# done.  Debian packages (qemu, kernel build deps, clang-19 for the debug
# kernel, the stock rdma-core userspace the VM runs), rust-src, bindgen-cli
# (crates.io) and libclang (the PyPI wheel).
#
# Every piece is checked after it is installed; a piece that cannot be had
# ends the run with an "rrxe: error:" line saying which and what to do.
# tools/testing/setup-test.sh runs this script with each piece missing.
. "$(dirname "$0")/lib.sh"
rrxe_trap_errors
rrxe_toolchain_env

PKGS=(
	# kernel build (release: GCC; debug: clang-19, lld-19, llvm-19)
	build-essential flex bison bc libelf-dev libssl-dev cpio kmod xz-utils
	# the kernel image is LZ4-compressed (configs/rrxe-vm.config)
	lz4
	clang-19 lld-19 llvm-19
	# the test VM and what runs in it: rdma-core's userspace, perftest,
	# rdma_cm tools (rping), iproute2 (ip, rdma, ss), ping, tcpdump
	qemu-system-x86 iproute2 iputils-ping ibverbs-utils ibverbs-providers
	rdmacm-utils perftest rdma-core python3 python3-pyverbs tcpdump
	# NVMe over RDMA (kernel host and target in the VM): nvme connect, fio
	nvme-cli fio
	# the verbs samples (samples/verbs): libibverbs' headers, and strace
	# to count their system calls
	libibverbs-dev strace
	# make test's documentation check (sphinx-build of Documentation/rrxe)
	python3-sphinx
)

missing_pkgs() {
	local p
	for p in "${PKGS[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || echo "$p"
	done
	return 0
}

RRXE_STEP="checking the Rust toolchain"
command -v rustup >/dev/null || die "rustup not found: this machine's rustc 1.95 comes from rustup (https://rustup.rs)"
# rust-src for the kernel's Rust build; rustfmt and clippy for make test's
# rustfmt and clippy checks.
# The list is read whole before it is searched: `rustup ... | grep -q`
# under pipefail fails when grep exits early and rustup gets SIGPIPE.
rust_component_installed() {
	local list
	list=$(rustup component list --installed 2>/dev/null) || return 1
	grep -Eq "^$1(-|\$)" <<<"$list"
}
for comp in rust-src rustfmt clippy; do
	if ! rust_component_installed "$comp"; then
		step "rustup component add $comp"
		rustup component add "$comp" >/dev/null || die "rustup component add $comp failed (output above)"
		rust_component_installed "$comp" ||
			die "$comp is not installed after 'rustup component add $comp'"
	fi
done

# bindgen-cli is compiled from crates.io.  It needs only cargo and a C
# linker, so where the linker is already there it compiles while apt-get
# installs the Debian packages (mostly network and disk); otherwise after
# them (build-essential).  Unoptimized (opt-level 0): 26 s of CPU instead
# of 106 on this machine, and it then takes 18 s instead of 7 for the
# kernel's bindings (the same output), once per cold kernel build and
# beside that build's C compiles.
bindgen_pid="" blog=""
bindgen_start() {
	step "cargo install --locked bindgen-cli (a few minutes)"
	blog=$(mktemp "${TMPDIR:-/tmp}/rrxe-bindgen.XXXXXX")
	# In a session of its own, so that a failing step can stop it whole.
	CARGO_PROFILE_RELEASE_OPT_LEVEL=0 setsid cargo install --locked bindgen-cli >"$blog" 2>&1 &
	bindgen_pid=$!
}
bindgen_end() {
	local pid=$bindgen_pid
	RRXE_STEP="cargo install --locked bindgen-cli"
	bindgen_pid=""
	if ! wait "$pid"; then
		tail -20 "$blog" >&2
		die "cargo install --locked bindgen-cli failed (last lines above; full log $blog)"
	fi
	rm -f "$blog"
	command -v bindgen >/dev/null || die "bindgen is not on PATH after cargo install (is \$HOME/.cargo/bin on PATH?)"
}
# A step that fails ends the script, and a compile still running with it.
trap '[ -z "$bindgen_pid" ] || kill -- "-$bindgen_pid" 2>/dev/null' EXIT
need_bindgen=0
command -v bindgen >/dev/null || need_bindgen=1
if [ $need_bindgen = 1 ] && command -v cc >/dev/null; then bindgen_start; fi

RRXE_STEP="checking Debian packages"
mapfile -t missing < <(missing_pkgs)
if [ ${#missing[@]} -gt 0 ]; then
	step "apt-get install ${missing[*]}"
	[ "$(id -u)" = 0 ] || die "need root to install Debian packages: run 'apt-get install ${missing[*]}' as root, or make demo as root"
	apt-get update -qq || die "apt-get update failed: check the network and /etc/apt/sources.list"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
		die "apt-get install ${missing[*]} failed (output above)"
	mapfile -t still < <(missing_pkgs)
	[ ${#still[@]} = 0 ] || die "still not installed after apt-get install: ${still[*]}"
fi

if [ $need_bindgen = 1 ]; then
	[ -n "$bindgen_pid" ] || bindgen_start
	bindgen_end
fi

# The wheel is needed whatever the flavor (the release flavor's bindgen
# uses it), so it is checked directly, not through LIBCLANG_PATH.
wheel=$(rrxe_wheel_libclang) || wheel=""
if [ -z "$wheel" ] || [ ! -e "$wheel/libclang.so" ]; then
	step "pip install libclang (libclang >= 17 wheel, for bindgen)"
	python3 -m pip install -q libclang >/dev/null 2>&1 ||
		die "'python3 -m pip install libclang' failed: check that $(command -v python3) has pip and PyPI is reachable"
	wheel=$(rrxe_wheel_libclang) || wheel=""
fi
[ -n "$wheel" ] && [ -e "$wheel/libclang.so" ] ||
	die "libclang.so of the PyPI wheel not found (${wheel:-'import clang' fails}): 'python3 -c \"import clang\"' must work"

# open-iscsi's iscsid and iscsiadm, for the iSER tests' initiator (the
# kernel's ib_iser logs in through iscsid).  Unpacked from Debian's
# packages into the repository's out/open-iscsi, which the VM sees, not
# installed: the host gets no iscsid service and no /etc/iscsi.  The VM
# runs them with their libraries from there (lib/iser.sh).
ISCSI_DEBS=(open-iscsi libopeniscsiusr libisns0)
# (RRXE_ISCSI_ROOT elsewhere: tools/testing/runner/setup-test.sh.)
ISCSI_ROOT=${RRXE_ISCSI_ROOT:-$(cd "$(dirname "$0")/.." && pwd)/out/open-iscsi}
if [ ! -x "$ISCSI_ROOT/sbin/iscsid" ]; then
	RRXE_STEP="unpacking open-iscsi for the iSER tests"
	step "open-iscsi (${ISCSI_DEBS[*]}) unpacked into $ISCSI_ROOT (not installed)"
	dl=$RRXE_CACHE/dl/open-iscsi
	if [ "$(ls "$dl"/*.deb 2>/dev/null | wc -l)" != ${#ISCSI_DEBS[@]} ]; then
		# One version of each package, freshly downloaded; a machine whose
		# package lists are stale or absent updates them and retries.
		rm -rf "$dl"
		mkdir -p "$dl"
		(cd "$dl" && apt-get download "${ISCSI_DEBS[@]}" >/dev/null 2>&1) ||
			{ [ "$(id -u)" = 0 ] && apt-get update -qq &&
				(cd "$dl" && apt-get download "${ISCSI_DEBS[@]}" >/dev/null); } ||
			die "apt-get download ${ISCSI_DEBS[*]} failed: check the network and /etc/apt/sources.list (apt-get update)"
		[ "$(ls "$dl"/*.deb 2>/dev/null | wc -l)" = ${#ISCSI_DEBS[@]} ] ||
			die "apt-get download ${ISCSI_DEBS[*]} gave $(ls "$dl" | wc -l) files in $dl, not ${#ISCSI_DEBS[@]} packages"
	fi
	rm -rf "$ISCSI_ROOT.tmp"
	mkdir -p "$ISCSI_ROOT.tmp"
	for deb in "$dl"/*.deb; do
		dpkg -x "$deb" "$ISCSI_ROOT.tmp" || die "dpkg -x $deb into $ISCSI_ROOT.tmp failed"
	done
	[ -x "$ISCSI_ROOT.tmp/sbin/iscsid" ] && [ -x "$ISCSI_ROOT.tmp/sbin/iscsiadm" ] ||
		die "the open-iscsi package has no sbin/iscsid or sbin/iscsiadm"
	rm -rf "$ISCSI_ROOT"
	mv "$ISCSI_ROOT.tmp" "$ISCSI_ROOT"
fi
