#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# samba-fetch.sh [--cached]
#
# Samba's smbd for tests/interop/cifs-smbd.sh, without installing Debian's
# `samba` package: it Conflicts with ksmbd-tools, which the other interop
# tests need. Downloads the `samba` .deb of exactly the version of the
# installed smbclient (bookworm-backports, through the private apt
# configuration of tests/vm/apt-private.sh, whose archive URI comes from the
# machine's own apt entry), extracts it with dpkg-deb -x into
#   ~/.cache/smbdirect/samba/<version without epoch>/
# and prints that directory. smbd runs from there as
#   <dir>/usr/sbin/smbd -s <smb.conf>
# and finds its shared libraries in the installed samba-libs (smbclient
# depends on the same version; smbd's RUNPATH is the system's private Samba
# directory): the extracted tree is checked with ldd, and samba-libs of the
# same version is installed if something is missing.
#
# Beside smbd, the same version's smbtorture (the samba-testsuite package)
# with the private libraries it needs from python3-samba, winbind,
# python3-talloc and python3-ldb, extracted into the same tree and run as
#   LD_LIBRARY_PATH=$(<dir>/lib-path) <dir>/usr/bin/smbtorture
# for the SMB2 suites against the patched smbd (tests/interop/samba-smbtorture.sh).
#
# Cached by version (the marker .smbdirect-complete-2), idempotent, safe to
# run concurrently (flock). --cached looks for a complete tree only, never
# downloads (exit 1 if there is none): the test VM, whose HOME is /tmp and
# which has no network, finds the host's cache with it, in
# $SMBDIRECT_CACHE, the cache of the repository's owner, /root's and
# /home/*'s.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
marker=.smbdirect-complete-2

die() { echo "samba-fetch: $*" >&2; exit 1; }

# The Debian version without its epoch names the directory. It is read from
# smbclient itself ("Version 4.22.6-Debian-4.22.6+dfsg-0+deb13u1~bpo12+1"):
# the test VM has no dpkg database (its /var/lib is a tmpfs).
command -v smbclient >/dev/null || die "smbclient is not installed (make deps installs it)"
smbclient_version() {
	smbclient --version 2>/dev/null | sed -n 's/^Version .*-Debian-\(.*\)$/\1/p'
}

if [ "${1:-}" = --cached ]; then
	# Loading smbclient costs seconds in the TCG guest: the package's
	# changelog names the same version, when it is there.
	vdir=$(zcat /usr/share/doc/smbclient/changelog.Debian.gz 2>/dev/null |
		sed -n '1s/^samba (\([0-9]*:\)\?\([^)]*\)).*/\2/p' || true)
	[ -n "$vdir" ] || vdir=$(smbclient_version)
	[ -n "$vdir" ] || die "cannot tell the Debian version of smbclient"
	caches=()
	[ -n "${SMBDIRECT_CACHE:-}" ] && caches+=("$SMBDIRECT_CACHE")
	[ -n "${XDG_CACHE_HOME:-}" ] && caches+=("$XDG_CACHE_HOME/smbdirect")
	caches+=("$HOME/.cache/smbdirect")
	owner=$(stat -c %U "$here" 2>/dev/null || true)
	if [ -n "$owner" ]; then
		h=$(getent passwd "$owner" | cut -d: -f6)
		[ -n "$h" ] && caches+=("$h/.cache/smbdirect")
	fi
	caches+=(/root/.cache/smbdirect)
	for h in /home/*; do caches+=("$h/.cache/smbdirect"); done
	for c in "${caches[@]}"; do
		if [ -f "$c/samba/$vdir/$marker" ]; then
			echo "$c/samba/$vdir"
			exit 0
		fi
	done
	die "no extracted samba $vdir in ${caches[*]} (run tests/samba-fetch.sh, or make deps, on the host)"
fi
[ $# -eq 0 ] || { echo "usage: samba-fetch.sh [--cached]" >&2; exit 2; }
vdir=$(smbclient_version)
[ -n "$vdir" ] || die "cannot tell the Debian version of smbclient from '$(smbclient --version 2>&1)'"

# The package version, with its epoch, for apt.
ver=$(dpkg-query -W -f='${Version}' smbclient 2>/dev/null || true)
[ "${ver#*:}" = "$vdir" ] ||
	die "smbclient says it is $vdir, dpkg says '$ver': a smbclient that is not Debian's?"

. "$here/vm/apt-private.sh"
dest=$SD_CACHE/samba/$vdir
mkdir -p "$SD_CACHE/samba"
exec 9>"$dest.lock"
flock 9
if [ ! -f "$dest/$marker" ]; then
	apt_private update >&2
	work=$SD_CACHE/samba/.work-$vdir
	rm -rf "$work" "$dest"
	mkdir -p "$work"
	# python3-talloc and python3-ldb carry their own versions, built from
	# the same Samba: bookworm-backports' are the ones of this Samba.
	if ! (cd "$work" && apt_private download "samba=$ver" \
		"samba-testsuite=$ver" "python3-samba=$ver" "winbind=$ver" \
		python3-talloc/bookworm-backports python3-ldb/bookworm-backports >&2); then
		rm -rf "$work"
		die "could not download samba $ver (the version of the installed smbclient); if bookworm-backports has moved on, upgrade smbclient first (make deps)"
	fi
	for deb in "$work"/*.deb; do
		dpkg-deb -x "$deb" "$work/tree"
	done
	[ -x "$work/tree/usr/sbin/smbd" ] || { rm -rf "$work"; die "the samba package has no usr/sbin/smbd"; }
	[ -x "$work/tree/usr/bin/smbtorture" ] || { rm -rf "$work"; die "samba-testsuite has no usr/bin/smbtorture"; }
	# smbtorture's private libraries, wherever the packages put them
	(cd "$work/tree" && find "$PWD" -name '*.so*' -printf '%h\n' | sort -u |
		sed "s|^$work/tree|$dest|" | paste -sd:) > "$work/tree/lib-path"
	mv "$work/tree" "$dest"
	rm -rf "$work"
	touch "$dest/$marker"
fi

# smbd's libraries: the system's samba-libs of the same version, and the
# private ones the samba package itself ships (extracted beside it).
missing() {
	LD_LIBRARY_PATH=$dest/usr/lib/x86_64-linux-gnu/samba ldd "$dest/usr/sbin/smbd" 2>&1 |
		awk '/not found/ { print $1 }'
}
if [ -n "$(missing)" ]; then
	echo "samba-fetch: smbd lacks $(missing | tr '\n' ' '); installing samba-libs $ver" >&2
	sudo=
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	grep bookworm-backports "$SD_APT/sources.list" >"$SD_APT/backports.list"
	mkdir -p "$SD_APT/lists-bpo/partial"
	$sudo apt-get -q -o "Dir::Etc::sourcelist=$SD_APT/backports.list" \
		-o "Dir::State::Lists=$SD_APT/lists-bpo" -o APT::Get::List-Cleanup=0 \
		update >&2
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get -q \
		-o "Dir::Etc::sourcelist=$SD_APT/backports.list" \
		-o "Dir::State::Lists=$SD_APT/lists-bpo" \
		install -y --no-install-recommends "samba-libs=$ver" >&2
	[ -z "$(missing)" ] || die "smbd still lacks $(missing | tr '\n' ' ')"
fi
echo "$dest"
