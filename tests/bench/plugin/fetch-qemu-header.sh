#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fetch-qemu-header.sh
#
# The QEMU TCG plugin API header (include/qemu/qemu-plugin.h) of exactly
# the installed QEMU, for tests/bench/plugin/sdcount.c. No Debian package
# ships it, so the Debian source package of the installed version
# (dpkg's ${source:Version} of qemu-system-x86, e.g. 1:7.2+dfsg-7+deb12u18)
# is fetched with `apt-get source --download-only`: apt checks the .dsc
# against the signed Release of the suite that lists it, and every file
# against the .dsc. The deb-src entries are derived from the machine's own
# Debian entries (same URIs, the release's suites: bookworm,
# bookworm-updates, bookworm-security), written into a private list in the
# cache and never into the system's lists; no mirror host is named here.
#
# Only the header is kept, taken from the orig tarball; if one of Debian's
# patches (debian/patches/series) touches it, the script fails rather than
# hand back an unpatched header. Result, printed on stdout:
#   ~/.cache/smbdirect/qemu-plugin/<version without epoch>/include/qemu/qemu-plugin.h
# (its directory's include/ is what -I needs). Cached by version (marker
# .smbdirect-complete), idempotent, safe to run concurrently (flock).
# The header includes only <inttypes.h>, <stdbool.h> and <stddef.h>.
set -euo pipefail

die() { echo "fetch-qemu-header: $*" >&2; exit 1; }

SD_CACHE=${SMBDIRECT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/smbdirect}
pkg=qemu-system-x86
srcpkg=$(dpkg-query -W -f='${source:Package}' "$pkg" 2>/dev/null) ||
	die "$pkg is not installed (make deps installs it)"
ver=$(dpkg-query -W -f='${source:Version}' "$pkg")
[ "$srcpkg" = qemu ] || die "$pkg is built from '$srcpkg', not qemu: not Debian's?"
vdir=${ver#*:}
dest=$SD_CACHE/qemu-plugin/$vdir
hdr=$dest/include/qemu/qemu-plugin.h

mkdir -p "$SD_CACHE/qemu-plugin"
exec 9>"$dest.lock"
flock 9
if [ -f "$dest/.smbdirect-complete" ] && [ -f "$hdr" ]; then
	echo "$hdr"
	exit 0
fi

# The machine's Debian entries for this release, as "URI SUITE" lines
# (deb822 .sources and one-line sources.list alike).
# shellcheck disable=SC1091 # the running system's file
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$codename" ] || die "/etc/os-release names no VERSION_CODENAME"
entries=$( {
	awk -v c="$codename" '
		function flush(i, n, s) {
			if (types ~ /(^|[ \t])deb([ \t]|$)/ && uris != "" && keyring) {
				n = split(suites, s, /[ \t]+/)
				for (i = 1; i <= n; i++)
					if (s[i] ~ ("^" c "(-updates|-security)?$"))
						print uris, s[i]
			}
			types = ""; uris = ""; suites = ""; keyring = 0
		}
		/^[ \t]*#/ { next }
		/^Types:/ { types = $0 }
		/^URIs:/ { uris = $2 }
		/^Suites:/ { suites = $0; sub(/^Suites:[ \t]*/, "", suites) }
		/^Signed-By:.*debian-archive-keyring/ { keyring = 1 }
		/^[ \t]*$/ { flush() }
		END { flush() }
	' /etc/apt/sources.list.d/*.sources 2>/dev/null || true
	if [ -r /etc/apt/sources.list ]; then
		awk -v c="$codename" '$1 == "deb" {
			i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
			if ($(i + 1) ~ ("^" c "(-updates|-security)?$")) print $i, $(i + 1) }' \
			/etc/apt/sources.list
	fi
} | sort -u)
[ -n "$entries" ] || die "no Debian '$codename' entry in /etc/apt/sources.list{,.d}"

apt_dir=$SD_CACHE/apt-qemu-src
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
mkdir -p "$apt_dir/lists/partial"
echo "$entries" | while read -r uri suite; do
	echo "deb-src [signed-by=$keyring] $uri $suite main"
done > "$apt_dir/sources.list"
opts=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list"
	-o Dir::Etc::sourceparts=-
	-o "Dir::State::Lists=$apt_dir/lists"
	-o "Dir::Cache::pkgcache=$apt_dir/pkgcache.bin"
	-o "Dir::Cache::srcpkgcache=$apt_dir/srcpkgcache.bin"
	-o APT::Get::List-Cleanup=0)
[ "$(id -u)" -ne 0 ] || opts+=(-o APT::Sandbox::User=root)

work=$SD_CACHE/qemu-plugin/.work-$vdir
rm -rf "$work" "$dest"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
apt-get -q "${opts[@]}" update >&2 || die "apt-get update of $apt_dir/sources.list failed"
(cd "$work" && apt-get -q "${opts[@]}" source --download-only "qemu=$ver" >&2) ||
	die "apt-get source --download-only qemu=$ver failed (is $ver still in the archive?)"

upver=${vdir%-*}
orig=$(find "$work" -maxdepth 1 -name "qemu_$upver.orig.tar.*" | head -n1)
debtar=$(find "$work" -maxdepth 1 -name "qemu_$vdir.debian.tar.*" | head -n1)
[ -n "$orig" ] || die "no orig tarball among $(ls "$work")"
[ -n "$debtar" ] || die "no debian tarball among $(ls "$work")"

mkdir -p "$work/x"
tar -C "$work/x" -xf "$debtar" debian/patches
if [ -f "$work/x/debian/patches/series" ]; then
	touched=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$work/x/debian/patches/series" |
		awk '{ print $1 }' | while read -r p; do
			if grep -q '^+++ .*include/qemu/qemu-plugin\.h' "$work/x/debian/patches/$p"; then
				echo "$p"
			fi
		done)
	[ -z "$touched" ] ||
		die "Debian's patches change qemu-plugin.h ($touched): apply them before use"
fi
tar -C "$work/x" -xf "$orig" --wildcards '*/include/qemu/qemu-plugin.h'
got=$(find "$work/x" -path '*/include/qemu/qemu-plugin.h' | head -n1)
[ -n "$got" ] || die "$(basename "$orig") has no include/qemu/qemu-plugin.h"
mkdir -p "$work/out/include/qemu"
cp "$got" "$work/out/include/qemu/qemu-plugin.h"
(cd "$work" && sha256sum "$(basename "$orig")" "$(basename "$debtar")" ./*.dsc) \
	> "$work/out/sources.sha256"
echo "$ver" > "$work/out/version"
mv "$work/out" "$dest"
touch "$dest/.smbdirect-complete"
echo "fetch-qemu-header: qemu $ver: $hdr" >&2
echo "$hdr"
