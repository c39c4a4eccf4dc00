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
sd_linux_source "$pkg" "$ver" apt_private download "$pkg=$ver"
