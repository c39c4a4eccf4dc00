#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build.sh ROOT BUILD [KDIR]: builds the user space (libsmbdirect, the
# preload, the smbdirect command, the VM test programs) for the test VM into
# BUILD/userspace/build, which the guest sees through the repository share,
# and prints that directory. Then the install test's host half: `make
# install DESTDIR=BUILD/userspace/stage` (the module too when KDIR is given)
# and tests/userspace/install/build-programs.sh, which builds programs
# against the staged tree with pkg-config and CMake only, into
# BUILD/userspace/install-programs. A failure there leaves no programs; the
# guest's install.sh reports it.
set -euo pipefail
root=$(realpath "$1")
mkdir -p "$2"
build=$(realpath "$2")
us=$build/userspace
kdir=${3:-}
mkdir -p "$us"
log=$us/build.log
{
	cmake -S "$root/userspace" -B "$us/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DSD_HOST_TESTS=OFF -DSD_VM_TESTS=ON -DSD_WERROR=ON -DCMAKE_INSTALL_PREFIX=/usr/local &&
	cmake --build "$us/build" -j "$(($(nproc) + 1))"
} >"$log" 2>&1 || { tail -n 40 "$log" >&2; exit 1; }

rm -rf "$us/stage" "$us/install-programs"
ilog=$us/install.log
{
	make --no-print-directory -C "$root" install BUILD="$build" PREFIX=/usr/local WERROR=1 \
		DESTDIR="$us/stage" ${kdir:+KDIR="$kdir"} &&
	if [ -f "$root/tests/userspace/install/build-programs.sh" ]; then
		bash "$root/tests/userspace/install/build-programs.sh" "$us/stage" \
			"$us/install-programs"
	fi
} >"$ilog" 2>&1 || { echo "build.sh: install test's host half failed: $ilog" >&2
	tail -n 20 "$ilog" >&2; rm -rf "$us/install-programs"; }
echo "$us/build"
