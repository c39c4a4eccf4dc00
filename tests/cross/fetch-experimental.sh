#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fetch-experimental.sh --newest | SERIES
#
# The newest kernel Debian carries is in experimental (release candidates),
# which tests/vm/apt-private.sh does not list. This script keeps its own
# private apt configuration for experimental only, with the archive URI
# taken from the machine's own Debian entry (sd_debian_uri) and nothing
# added to the system's lists, so that fetch-kernel.sh's choice of versions
# never sees experimental's packages.
#   --newest  print the newest linux-source-SERIES experimental has, e.g.
#             "7.3"; exit 3, saying so in one line, when it has none
#   SERIES    download and unpack linux-source-SERIES from experimental into
#             the cache (as fetch-kernel.sh does) and print the tree's path
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../vm/apt-private.sh"

arg=${1:?usage: fetch-experimental.sh --newest | SERIES}
exp=$SD_CACHE/apt-experimental
mkdir -p "$exp/lists/partial" "$exp/archives/partial"
uri=$(sd_debian_uri)
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri experimental main" \
	>"$exp/sources.list.new"
mv "$exp/sources.list.new" "$exp/sources.list"
opts=(-o "Dir::Etc::sourcelist=$exp/sources.list" -o Dir::Etc::sourceparts=-
	-o "Dir::State::Lists=$exp/lists" -o "Dir::Cache::archives=$exp/archives"
	-o "Dir::Cache::pkgcache=$exp/pkgcache.bin"
	-o "Dir::Cache::srcpkgcache=$exp/srcpkgcache.bin"
	-o APT::Get::List-Cleanup=0 -o APT::Sandbox::User=root)
# Refreshed at most every 12 hours (by a stamp of our own: apt keeps the
# archive's dates on the lists it did not need to download again), one
# caller at a time.
if [ -z "$(find "$exp/updated" -mmin -720 2>/dev/null)" ]; then
	flock "$exp.lock" apt-get -q "${opts[@]}" update >&2
	touch "$exp/updated"
fi
xcache() { flock "$exp.lock" apt-cache "${opts[@]}" "$@"; }

if [ "$arg" = --newest ]; then
	series=$(xcache pkgnames linux-source- 2>/dev/null |
		sed -n 's/^linux-source-\([0-9][0-9]*\.[0-9][0-9]*\)$/\1/p' | sort -V | tail -n1) || true
	if [ -z "$series" ]; then
		echo "fetch-experimental: Debian experimental carries no linux-source-X.Y" >&2
		exit 3
	fi
	echo "$series"
	exit 0
fi

pkg=linux-source-$arg
ver=$(xcache show "$pkg" 2>/dev/null | awk '/^Version:/ { print $2 }' | sort -V | tail -n1) || true
if [ -z "$ver" ]; then
	echo "fetch-experimental: $pkg is not in Debian experimental" >&2
	exit 3
fi
echo "fetch-experimental: $pkg $ver" >&2
sd_linux_source "$pkg" "$ver" flock "$exp.lock" apt-get -q "${opts[@]}" download "$pkg=$ver"
