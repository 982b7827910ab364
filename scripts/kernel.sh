#!/usr/bin/env bash
# Build (or reuse) the test-VM kernel of $FLAVOR (release or debug):
# Debian's linux-source-7.2, tinyconfig + the flavor's config fragments,
# patches/series applied; cached in $KBUILD_CACHE.  Incremental: a second
# run only rebuilds what changed.
#   kernel.sh          the whole: source, patches, config, build
#   kernel.sh source   only download and unpack the source (needs only
#                      apt-get, dpkg-deb, tar and xz, so it can run beside
#                      scripts/setup.sh: make test does that)
. "$(dirname "$0")/lib.sh"
rrxe_trap_errors
rrxe_toolchain_env

JOBS=${JOBS:-$(( $(nproc) + 1 ))}
DL="$RRXE_CACHE/dl"
DEB="$DL/linux-source-${KVER_PKG}_${KVER_DEB}_all.deb"

fetch_source() {
	[ -f "$DEB" ] && return
	step "downloading linux-source-$KVER_PKG $KVER_DEB (trixie-backports, private apt list)"
	local apt="$DL/apt"
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie-backports main" >"$apt/sources.list"
	local opts=(-o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" -o APT::Sandbox::User=root)
	apt-get "${opts[@]}" -qq update ||
		die "apt-get update of the private trixie-backports list failed: is deb.debian.org reachable?"
	(cd "$DL" && apt-get "${opts[@]}" -qq download "linux-source-$KVER_PKG=$KVER_DEB") ||
		die "apt-get download linux-source-$KVER_PKG=$KVER_DEB failed: is deb.debian.org reachable, is the version still in trixie-backports?"
	[ -f "$DEB" ] || die "linux-source-$KVER_PKG $KVER_DEB could not be downloaded (no $DEB)"
}

unpack_source() {
	[ -f "$KDIR/Makefile" ] && return
	step "unpacking kernel source into $KDIR"
	mkdir -p "$KBUILD_CACHE"
	rm -rf "$KDIR.tmp" && mkdir -p "$KDIR.tmp"
	dpkg-deb --fsys-tarfile "$DEB" | tar -xO "./usr/src/linux-source-$KVER_PKG.tar.xz" |
		tar -xJ -C "$KDIR.tmp" --strip-components=1
	mv "$KDIR.tmp" "$KDIR"
}

# Keep the tree's patch state equal to patches/series: revert what was
# applied before (saved copy), then apply the current series.
apply_patches() {
	local applied="$KBUILD_CACHE/applied-patches"
	local want
	want=$(cd "$RRXE_TOP/patches" && { cat series; sed '/^#/d' series | xargs -r cat; } | sha256sum | cut -c1-16)
	if [ -f "$applied/stamp" ] && [ "$(cat "$applied/stamp")" = "$want" ]; then return; fi
	if [ -f "$applied/series" ]; then
		step "reverting previously applied patches"
		tac "$applied/series" | sed '/^#/d' | while read -r p; do
			if [ -n "$p" ]; then patch -d "$KDIR" -p1 -R -s <"$applied/$p"; fi
		done
	fi
	rm -rf "$applied" && mkdir -p "$applied"
	if [ -f "$RRXE_TOP/patches/series" ]; then
		sed '/^#/d' "$RRXE_TOP/patches/series" | while read -r p; do
			[ -n "$p" ] || continue
			step "applying patches/$p"
			patch -d "$KDIR" -p1 -s -N <"$RRXE_TOP/patches/$p" || die "patch $p does not apply"
			cp "$RRXE_TOP/patches/$p" "$applied/"
		done
		cp "$RRXE_TOP/patches/series" "$applied/series"
	fi
	echo "$want" >"$applied/stamp"
}

# The effective setting of each symbol the fragments name: the last
# fragment that names it wins (as in merge_config.sh), so the debug
# fragment may override the release one (KMEMLEAK forces CRC32=y).
wanted_settings() {
	cat "${RRXE_FRAGMENTS[@]}" |
		sed -n -e 's/^\(CONFIG_[A-Za-z0-9_]*\)=.*/\1 &/p' -e 's/^# \(CONFIG_[A-Za-z0-9_]*\) is not set$/\1 &/p' |
		awk '{ sym = $1; $1 = ""; want[sym] = substr($0, 2); if (!(sym in seen)) { seen[sym] = 1; order[n++] = sym } }
		     END { for (i = 0; i < n; i++) print want[order[i]] }'
}

configure() {
	[ -f "$KDIR/.config" ] && [ -f "$KBUILD_CACHE/config.stamp" ] && return
	step "configuring ($FLAVOR): tinyconfig + ${RRXE_FRAGMENTS[*]#"$RRXE_TOP/"}"
	# shellcheck disable=SC2086
	make -C "$KDIR" -s $KMAKE_FLAGS rustavailable >/dev/null ||
		die "'make rustavailable' says no (output above): check rustc, rust-src, bindgen and LIBCLANG_PATH (run scripts/setup.sh)"
	# shellcheck disable=SC2086
	make -C "$KDIR" -s $KMAKE_FLAGS tinyconfig >/dev/null
	(cd "$KDIR" && scripts/kconfig/merge_config.sh -m .config "${RRXE_FRAGMENTS[@]}" >/dev/null)
	# shellcheck disable=SC2086
	make -C "$KDIR" -s $KMAKE_FLAGS olddefconfig >/dev/null
	# Every option the fragments ask for must have survived dependency
	# resolution ("is not set" lines: the symbol must not be =y/=m).
	local bad=0 line sym
	while read -r line; do
		case "$line" in
		"# CONFIG_"*" is not set")
			sym=${line#"# "}; sym=${sym%" is not set"}
			if grep -Eq "^$sym=[ym]" "$KDIR/.config"; then echo "  still set: $line" >&2; bad=1; fi
			;;
		*)
			grep -qx "$line" "$KDIR/.config" || { echo "  missing: $line" >&2; bad=1; }
			;;
		esac
	done < <(wanted_settings)
	[ $bad = 0 ] || die "config fragments not satisfied (see above): an option's dependencies are missing; fix configs/"
	touch "$KBUILD_CACHE/config.stamp"
}

# The tree only changes through this script, so a stamp naming the applied
# patch set tells whether make has anything to do.
build() {
	local stamp="$KBUILD_CACHE/build.stamp" want
	want=$(cat "$KBUILD_CACHE/applied-patches/stamp")
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$KDIR/arch/x86/boot/bzImage" ]; then
		return
	fi
	local cold="8-9 min"
	if [ "$FLAVOR" = debug ]; then cold="15 min"; fi
	step "building kernel $KEY (make -j$JOBS; cold: about $cold on 2 cores)"
	local t0=$SECONDS
	# shellcheck disable=SC2086
	make -C "$KDIR" -s $KMAKE_FLAGS -j"$JOBS" bzImage modules
	# shellcheck disable=SC2086
	make -C "$KDIR" -s $KMAKE_FLAGS INSTALL_MOD_PATH="$KMODROOT" modules_install >/dev/null
	echo "$want" >"$stamp"
	log "kernel built in $((SECONDS - t0)) s"
}

case ${1:-all} in
source)
	fetch_source
	unpack_source
	exit 0
	;;
all) ;;
*) die "usage: kernel.sh [source]" ;;
esac
if [ "$FLAVOR" = debug ]; then
	command -v clang-19 >/dev/null && command -v ld.lld-19 >/dev/null && command -v llvm-ar-19 >/dev/null ||
		die "the debug flavor builds with clang-19, lld-19 and llvm-19 (Debian packages): run scripts/setup.sh"
fi
fetch_source
unpack_source
apply_patches
configure
build
echo "$KDIR"
