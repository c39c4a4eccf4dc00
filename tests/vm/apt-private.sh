#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A private apt configuration for suites the machine does not list
# (bookworm-backports, sid). The archive URI is taken from the machine's own
# Debian source entry, so no mirror host is ever written into the repository,
# and nothing is added to the system's apt lists.
#
# Usage (sourced):  . apt-private.sh; apt_private update; apt_private_cache policy X
set -euo pipefail

SD_CACHE=${SMBDIRECT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/smbdirect}
SD_APT=$SD_CACHE/apt

# Print the URI of the machine's main Debian archive (the entry that carries
# the release's own suite, not -security).
sd_debian_uri() {
	local codename uri
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
	uri=$(awk -v c="$codename" '
		/^[[:space:]]*#/ { next }
		/^Types:/ { types=$0 }
		/^URIs:/ { uris=$2 }
		/^Suites:/ { for (i = 2; i <= NF; i++) if ($i == c) hit=1 }
		/^[[:space:]]*$/ { if (hit && types ~ /deb( |$)/ && uris != "") { print uris; exit } hit=0; uris="" }
		END { if (hit && uris != "") print uris }
	' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1)
	if [ -z "$uri" ] && [ -r /etc/apt/sources.list ]; then
		uri=$(awk -v c="$codename" '$1 == "deb" {
			i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
			if ($(i + 1) == c) { print $i; exit } }' /etc/apt/sources.list)
	fi
	if [ -z "$uri" ]; then
		echo "apt-private: no Debian '$codename' entry in /etc/apt/sources.list{,.d}" >&2
		return 1
	fi
	echo "$uri"
}

sd_apt_opts=()
sd_apt_setup() {
	local uri keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	uri=$(sd_debian_uri)
	local tmp
	mkdir -p "$SD_APT/lists/partial" "$SD_APT/archives/partial"
	# Several callers at once (make check boots two VMs side by side):
	# each writes its own file and renames it into place.
	tmp=$(mktemp "$SD_APT/sources.list.XXXXXX")
	cat > "$tmp" <<EOT
deb [signed-by=$keyring] $uri bookworm-backports main
deb [signed-by=$keyring] $uri sid main
EOT
	chmod 644 "$tmp"
	mv "$tmp" "$SD_APT/sources.list"
	sd_apt_opts=(-o "Dir::Etc::sourcelist=$SD_APT/sources.list"
		-o Dir::Etc::sourceparts=-
		-o "Dir::State::Lists=$SD_APT/lists"
		-o "Dir::Cache::archives=$SD_APT/archives"
		-o "Dir::Cache::pkgcache=$SD_APT/pkgcache.bin"
		-o "Dir::Cache::srcpkgcache=$SD_APT/srcpkgcache.bin"
		-o APT::Get::List-Cleanup=0
		-o APT::Sandbox::User=root)
}

# apt-get with the private sources only; refreshes the lists at most every
# 12 hours. One caller at a time (flock on $SD_APT.lock): apt's own lock
# would make a second concurrent update fail instead of wait.
apt_private() {
	[ ${#sd_apt_opts[@]} -gt 0 ] || sd_apt_setup
	if [ "${1:-}" = update ]; then
		if [ -n "$(find "$SD_APT/lists" -maxdepth 1 -name '*Packages*' -mmin -720 2>/dev/null | head -n1)" ]; then
			return 0
		fi
	fi
	flock "$SD_APT.lock" apt-get -q "${sd_apt_opts[@]}" "$@"
}

apt_private_cache() {
	[ ${#sd_apt_opts[@]} -gt 0 ] || sd_apt_setup
	flock "$SD_APT.lock" apt-cache "${sd_apt_opts[@]}" "$@"
}

# sd_linux_source PKG VER DOWNLOAD...: the tree of Debian's linux-source
# package PKG at VER, unpacked once into $SD_CACHE/src under a lock (a tree
# counts once it is marked complete). DOWNLOAD... fetches the .deb into the
# current directory. Prints the tree's path.
sd_linux_source() {
	local pkg=$1 ver=$2 dest work tarball
	shift 2
	dest=$SD_CACHE/src/$pkg-$ver
	mkdir -p "$SD_CACHE/src"
	exec 9>"$dest.lock"
	flock 9
	if [ ! -f "$dest/.smbdirect-complete" ]; then
		work=$SD_CACHE/src/.work-$pkg-$ver
		rm -rf "$work" "$dest"
		mkdir -p "$work"
		(cd "$work" && "$@" >&2) || return 1
		dpkg-deb -x "$work"/"$pkg"_*.deb "$work/deb" || return 1
		tarball=$(find "$work/deb/usr/src" -maxdepth 1 -name 'linux-source-*.tar.*' | head -n1)
		mkdir -p "$work/tree"
		tar -C "$work/tree" -xf "$tarball" || return 1
		mv "$work/tree/$(ls "$work/tree" | head -n1)" "$dest" || return 1
		rm -rf "$work"
		touch "$dest/.smbdirect-complete"
	fi
	exec 9>&-
	echo "$dest"
}
