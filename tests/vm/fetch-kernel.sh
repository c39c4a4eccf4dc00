#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fetch-kernel.sh SERIES   (6.12 | 7.2 | ...)
#
# Downloads Debian's linux-source-SERIES package (6.12 from bookworm-backports,
# newer ones from sid) through the private apt configuration, unpacks it into
# the cache and prints the source tree's path. Cached by package version.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/apt-private.sh"

series=${1:?usage: fetch-kernel.sh SERIES}
pkg=linux-source-$series

apt_private update >&2
ver=$(apt_private_cache show "$pkg" 2>/dev/null | awk '/^Version:/ { print $2 }' |
	sort -V | tail -n1)
if [ -z "$ver" ]; then
	echo "fetch-kernel: $pkg is in neither bookworm-backports nor sid" >&2
	exit 1
fi
dest=$SD_CACHE/src/$pkg-$ver
mkdir -p "$SD_CACHE/src"
exec 9>"$dest.lock"
flock 9
if [ -f "$dest/.smbdirect-complete" ]; then
	echo "$dest"
	exit 0
fi

work=$SD_CACHE/src/.work-$pkg-$ver
rm -rf "$work" "$dest"
mkdir -p "$work"
(cd "$work" && apt_private download "$pkg=$ver" >&2)
dpkg-deb -x "$work"/"$pkg"_*.deb "$work/deb"
tarball=$(find "$work/deb/usr/src" -maxdepth 1 -name 'linux-source-*.tar.*' | head -n1)
mkdir -p "$work/tree"
tar -C "$work/tree" -xf "$tarball"
mv "$work/tree/$(ls "$work/tree" | head -n1)" "$dest"
rm -rf "$work"
touch "$dest/.smbdirect-complete"
echo "$dest"
