#!/usr/bin/env bash
# Build (or reuse) the test-VM kernel: Debian's linux-source-7.2, tinyconfig +
# configs/rrxe-vm.config, patches/series applied; cached in $KBUILD_CACHE.
# Incremental: a second run only rebuilds what changed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
rrxe_toolchain_env

JOBS=${JOBS:-$(( $(nproc) + 1 ))}
DL="$RRXE_CACHE/dl"
DEB="$DL/linux-source-${KVER_PKG}_${KVER_DEB}_all.deb"

fetch_source() {
	[ -f "$DEB" ] && return
	log "downloading linux-source-$KVER_PKG $KVER_DEB (trixie-backports, private apt list)"
	local apt="$DL/apt"
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie-backports main" >"$apt/sources.list"
	local opts=(-o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" -o APT::Sandbox::User=root)
	apt-get "${opts[@]}" -qq update
	(cd "$DL" && apt-get "${opts[@]}" -qq download "linux-source-$KVER_PKG=$KVER_DEB")
	[ -f "$DEB" ] || die "linux-source-$KVER_PKG $KVER_DEB could not be downloaded"
}

unpack_source() {
	[ -f "$KDIR/Makefile" ] && return
	log "unpacking kernel source into $KDIR"
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
		log "reverting previously applied patches"
		tac "$applied/series" | sed '/^#/d' | while read -r p; do
			[ -n "$p" ] && patch -d "$KDIR" -p1 -R -s <"$applied/$p"
		done
	fi
	rm -rf "$applied" && mkdir -p "$applied"
	if [ -f "$RRXE_TOP/patches/series" ]; then
		sed '/^#/d' "$RRXE_TOP/patches/series" | while read -r p; do
			[ -n "$p" ] || continue
			log "applying patches/$p"
			patch -d "$KDIR" -p1 -s -N <"$RRXE_TOP/patches/$p" || die "patch $p does not apply"
			cp "$RRXE_TOP/patches/$p" "$applied/"
		done
		cp "$RRXE_TOP/patches/series" "$applied/series"
	fi
	echo "$want" >"$applied/stamp"
}

configure() {
	local frag="$RRXE_TOP/configs/rrxe-vm.config"
	[ -f "$KDIR/.config" ] && [ -f "$KBUILD_CACHE/config.stamp" ] && return
	log "configuring: tinyconfig + configs/rrxe-vm.config"
	make -C "$KDIR" -s ARCH=x86_64 rustavailable >/dev/null ||
		die "'make rustavailable' says no: check rustc, rust-src, bindgen and LIBCLANG_PATH (run scripts/setup.sh)"
	make -C "$KDIR" -s ARCH=x86_64 tinyconfig >/dev/null
	(cd "$KDIR" && scripts/kconfig/merge_config.sh -m .config "$frag" >/dev/null)
	make -C "$KDIR" -s ARCH=x86_64 olddefconfig >/dev/null
	# Every option the fragment asks for must have survived dependency resolution.
	local bad=0 line
	while read -r line; do
		case "$line" in CONFIG_*=*) ;; *) continue ;; esac
		grep -qx "$line" "$KDIR/.config" || { echo "  missing: $line" >&2; bad=1; }
	done <"$frag"
	[ $bad = 0 ] || die "config fragment not satisfied (see above)"
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
	log "building kernel $KEY (make -j$JOBS; a cold build takes 5-6 min on 2 cores)"
	local t0=$SECONDS
	make -C "$KDIR" -s ARCH=x86_64 -j"$JOBS" bzImage modules
	make -C "$KDIR" -s ARCH=x86_64 INSTALL_MOD_PATH="$KMODROOT" modules_install >/dev/null
	echo "$want" >"$stamp"
	log "kernel built in $((SECONDS - t0)) s"
}

fetch_source
unpack_source
apply_patches
configure
build
echo "$KDIR"
