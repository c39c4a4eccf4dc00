#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# userspace/samba/build.sh <build-dir> <libsmbdirect-prefix>
#
# `make samba`: Samba's smbd and smbclient with SMB-Direct and the RDMA
# channel of SMB2 READ/WRITE, on libsmbdirect. The patches in patches/
# (series: patches/series, in order) are against Samba 4.22.6, the
# version Debian 12 installs from bookworm-backports (smbclient and
# samba-libs); the source is Debian's orig tarball of that version (the
# archive no longer has the .dsc or the Debian patches of it, only the
# tarball), verified as apt verifies: the signed InRelease of
# bookworm-backports (gpgv, debian-archive-keyring) names the SHA-256 of
# its Sources index, which names the tarball's. The archive's URI is the
# machine's own apt entry (tests/vm/apt-private.sh).
#
# The tarball is cached in ~/.cache/smbdirect/samba-src/, the built tree in
# ~/.cache/smbdirect/samba-build/ (below). The tree is configured with a
# minimal configuration (no AD DC, no Python, system MIT Kerberos, bundled
# talloc/tevent/tdb/ldb; CFLAGS from SAMBA_CFLAGS, -O2 -g by default) and built
# with ccache: bin/default/source3/smbd/smbd and
# bin/default/source3/client/smbclient, compiled against
# <libsmbdirect-prefix>'s libsmbdirect through pkg-config (the `make samba`
# target installs it there first) and run with LD_LIBRARY_PATH=<build-dir>/bin/lib.
# Links in <build-dir>/bin name the results.
#
# The patched code is Samba's, under Samba's license (GPL-3.0-or-later):
# see patches/README.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -eq 2 ] || { echo "usage: build.sh <build-dir> <libsmbdirect-prefix>" >&2; exit 2; }
out=$(mkdir -p "$1" && cd "$1" && pwd)
sdprefix=$(cd "$2" && pwd)

ver=4.22.6
tarball=samba_$ver+dfsg.orig.tar.xz
suite=bookworm-backports
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

die() { echo "samba: $*" >&2; exit 1; }
for t in gpgv xz curl patch python3 pkg-config; do
	command -v "$t" >/dev/null || die "$t is missing (make deps installs it)"
done

. "$root/tests/vm/apt-private.sh"
src_cache=$SD_CACHE/samba-src
mkdir -p "$src_cache"

# --- the verified tarball --------------------------------------------------
fetch_tarball() {
	local uri tmp sources_sha want got
	uri=$(sd_debian_uri)
	tmp=$(mktemp -d "$src_cache/.fetch.XXXXXX")
	trap 'rm -rf "$tmp"' RETURN
	curl -fsS -o "$tmp/InRelease" "$uri/dists/$suite/InRelease" ||
		die "cannot fetch $uri/dists/$suite/InRelease"
	gpgv --keyring "$keyring" --output "$tmp/Release" "$tmp/InRelease" \
		2>"$tmp/gpgv.log" || { cat "$tmp/gpgv.log" >&2; die "InRelease: bad signature"; }
	sources_sha=$(awk '/^SHA256:/ { s = 1; next } /^[^ ]/ { s = 0 }
		s && $3 == "main/source/Sources.xz" { print $1 }' "$tmp/Release")
	[ -n "$sources_sha" ] || die "InRelease names no main/source/Sources.xz"
	curl -fsS -o "$tmp/Sources.xz" "$uri/dists/$suite/main/source/Sources.xz" ||
		die "cannot fetch the Sources index"
	got=$(sha256sum "$tmp/Sources.xz" | cut -d' ' -f1)
	[ "$got" = "$sources_sha" ] || die "Sources.xz: SHA-256 $got, InRelease says $sources_sha"
	want=$(xzcat "$tmp/Sources.xz" | awk -v f="$tarball" '
		/^Package: / { p = ($2 == "samba") } /^Checksums-Sha256:/ { c = p; next }
		/^[^ ]/ { c = 0 } c && $3 == f && !n++ { print $1 }')
	[ -n "$want" ] || die "$suite's Sources do not list $tarball"
	curl -fsS -o "$tmp/$tarball" "$uri/pool/main/s/samba/$tarball" ||
		die "cannot fetch $uri/pool/main/s/samba/$tarball"
	got=$(sha256sum "$tmp/$tarball" | cut -d' ' -f1)
	[ "$got" = "$want" ] || die "$tarball: SHA-256 $got, the archive says $want"
	echo "$want  $tarball" > "$tmp/$tarball.sha256"
	mv "$tmp/$tarball" "$src_cache/$tarball"
	mv "$tmp/$tarball.sha256" "$src_cache/$tarball.sha256"
	echo "samba: fetched and verified $tarball ($want)"
}
exec 8>"$src_cache/.lock"
flock 8
if [ ! -f "$src_cache/$tarball.sha256" ] ||
	! (cd "$src_cache" && sha256sum --quiet -c "$tarball.sha256" 2>/dev/null); then
	fetch_tarball
fi
exec 8>&-

# --- the tree: one per input, kept in the cache --------------------------------
# Everything the binaries depend on names the tree: this script, the
# patches, the tarball, the configure options and flags, the compiler, and
# the libsmbdirect headers the patches compile against. A warm cache reuses
# a complete tree as it is (a clean clone's `make samba` then takes
# seconds); otherwise the tree is unpacked, patched, configured and built
# there (ccache shares the compiles with earlier trees). The two most
# recently used trees are kept. Only smbd and smbclient are built, so the
# VFS modules the tests stack on shares are built into smbd: error_inject
# (a share whose zero-copy READ the VFS refuses), full_audit and
# time_audit (every VFS call, compiled with the patches that add one).
conf_opts=(--with-smbdirect --without-ad-dc --disable-python --without-json
	--without-ldap --without-ads --without-pam --without-systemd
	--without-libarchive --disable-cups --disable-iprint --without-gpgme
	--without-ldb-lmdb --without-winbind --disable-spotlight
	--without-acl-support --without-quotas --without-regedit --without-fam
	--disable-glusterfs --disable-cephfs --without-lttng --without-utmp
	--without-dmapi --without-automount --without-libunwind
	--with-shared-modules='!vfs_snapper'
	--with-static-modules=vfs_error_inject,vfs_full_audit,vfs_time_audit
	--bundled-libraries=ALL
	--with-system-mitkrb5)
cflags=${SAMBA_CFLAGS:--O2 -g}
key=$( {
	cat "$here/build.sh" "$here/patches/series"
	sed "s|^|$here/patches/|" "$here/patches/series" | xargs cat
	cat "$src_cache/$tarball.sha256"
	echo "${conf_opts[*]} $cflags"
	gcc --version | head -n 1
	(cd "$sdprefix/include" && find . -type f | sort | xargs cat)
} | sha256sum | cut -c1-16)
trees=$SD_CACHE/samba-build
dir=$trees/$ver-$key
tree=$dir/samba-$ver
mkdir -p "$trees"
exec 8>"$dir.lock"
flock 8
if [ ! -f "$dir/.smbdirect-complete" ]; then
	rm -rf "$dir"
	mkdir -p "$dir"
	tar -C "$dir" -xJf "$src_cache/$tarball"
	[ -d "$tree" ] || die "$tarball does not hold samba-$ver/"
	while read -r p; do
		[ -n "$p" ] || continue
		patch -d "$tree" -p1 -s --no-backup-if-mismatch < "$here/patches/$p" ||
			die "patches/$p does not apply"
	done < "$here/patches/series"

	export PKG_CONFIG_PATH=$sdprefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
	export PYTHONHASHSEED=1
	# ccache in depend mode (waf compiles with -MMD): a miss then costs
	# what gcc costs, where the preprocessor mode added 55% to these -O0
	# compiles (the top Makefile's note). Configure's checks, hundreds of
	# small programs compiled once each, bypass it.
	export CCACHE_DIR=${CCACHE_DIR:-$SD_CACHE/ccache} CCACHE_BASEDIR=$tree CCACHE_NOHASHDIR=1
	export CCACHE_DEPEND=${CCACHE_DEPEND:-1}
	cc=gcc
	command -v ccache >/dev/null && cc="ccache gcc"
	echo "samba: configuring and building Samba $ver with the patches in $tree (cold: about 15 minutes)"
	(cd "$tree" && CCACHE_DISABLE=1 CC="$cc" CFLAGS="$cflags" ./configure "${conf_opts[@]}") > "$out/configure.log" 2>&1 ||
		{ tail -n 30 "$out/configure.log"; die "configure failed (the package to install is named above; make deps installs them)"; }
	(cd "$tree" && ./buildtools/bin/waf build -j"$(nproc)" --targets=smbd/smbd,client/smbclient) \
		> "$out/build.log" 2>&1 ||
		{ grep -E 'error|Error' "$out/build.log" | head -n 40; die "build failed: $out/build.log"; }
	touch "$dir/.smbdirect-complete"
else
	echo "samba: Samba $ver with the patches, built before: $tree"
fi
touch "$dir"
exec 8>&-
# the two most recently used trees stay
ls -1dt "$trees"/*/ 2>/dev/null | tail -n +3 | while read -r old; do
	old=${old%/}
	exec 9>"$old.lock"
	flock -n 9 && rm -rf "$old" "$old.lock"
	exec 9>&-
done

mkdir -p "$out/bin"
ln -sfn "$tree/bin/default/source3/smbd/smbd" "$out/bin/smbd"
ln -sfn "$tree/bin/default/source3/client/smbclient" "$out/bin/smbclient"
ln -sfn "$sdprefix/lib" "$out/bin/lib"
echo "samba: $out/bin/smbd, $out/bin/smbclient (Samba $ver with SMB-Direct; run them with LD_LIBRARY_PATH=$out/bin/lib)"
