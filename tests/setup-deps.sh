#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Installs what the project needs on Debian 12, only what is missing. The
# bookworm-backports packages (ksmbd-tools 3.5.x; bookworm's 3.4.7 fails tree
# connect) come through the private apt configuration of tests/vm/, which
# derives the archive from the machine's own entry.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

bookworm=(
	build-essential g++ make cmake pkg-config python3 bc bison flex cpio rsync
	kmod xz-utils libelf-dev libssl-dev dwarves dkms ccache
	linux-headers-amd64
	googletest libgtest-dev clang llvm libclang-rt-dev
	gcc-aarch64-linux-gnu g++-aarch64-linux-gnu
	libc6-dev-i386 lib32gcc-12-dev lib32stdc++-12-dev
	qemu-system-x86 qemu-user
	iproute2 rdma-core ibverbs-utils perftest rdmacm-utils
	libibverbs-dev librdmacm-dev ibverbs-providers
	libnl-3-dev libnl-genl-3-dev libnl-route-3-dev abigail-tools socat fio
	nettle-dev liburing-dev
	debhelper dh-dkms lintian fakeroot autopkgtest
	python3-sphinx python3-sphinx-rtd-theme python3-yaml python3-jsonschema man-db groff-base
	debian-archive-keyring ca-certificates
	libgnutls28-dev libpopt-dev libparse-yapp-perl libkrb5-dev zlib1g-dev
	gpgv curl
)
backports=(ksmbd-tools smbclient)

sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo

missing=()
for p in "${bookworm[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup-deps: installing ${missing[*]}"
	$sudo apt-get -q update
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get -q install -y \
		--no-install-recommends "${missing[@]}"
fi

need_bpo=0
for p in "${backports[@]}"; do
	v=$(dpkg-query -W -f='${Version}' "$p" 2>/dev/null || true)
	case $v in *bpo*) ;; *) need_bpo=1 ;; esac
done
if [ $need_bpo -eq 1 ]; then
	echo "setup-deps: installing ${backports[*]} from bookworm-backports"
	# Both the system lists (for dependencies) and the private backports list.
	. "$here/vm/apt-private.sh"
	sd_apt_setup
	grep bookworm-backports "$SD_APT/sources.list" > "$SD_APT/backports.list"
	mkdir -p "$SD_APT/lists-bpo/partial"
	$sudo apt-get -q -o "Dir::Etc::sourcelist=$SD_APT/backports.list" \
		-o "Dir::State::Lists=$SD_APT/lists-bpo" -o APT::Get::List-Cleanup=0 \
		update
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get -q \
		-o "Dir::Etc::sourcelist=$SD_APT/backports.list" \
		-o "Dir::State::Lists=$SD_APT/lists-bpo" \
		install -y --no-install-recommends -t bookworm-backports "${backports[@]}"
fi

# Samba's smbd for tests/interop/cifs-smbd.sh, extracted into the cache (the
# samba package conflicts with ksmbd-tools, so it is never installed).
"$here/samba-fetch.sh" >/dev/null ||
	echo "setup-deps: no smbd for tests/interop/cifs-smbd.sh (see above)" >&2
