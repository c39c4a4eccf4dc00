#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build.sh ROOT BUILD: builds the user space (libsmbdirect, the preload, the
# smbdirect command, the VM test programs) for the test VM into
# BUILD/userspace/build, which the guest sees through the repository share.
# Prints the build directory. (`make install` uses the same build.)
set -euo pipefail
root=$(realpath "$1")
mkdir -p "$2"
build=$(realpath "$2")/userspace
mkdir -p "$build"
log=$build/build.log
{
	cmake -S "$root/userspace" -B "$build/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DSD_HOST_TESTS=OFF -DSD_VM_TESTS=ON -DCMAKE_INSTALL_PREFIX=/usr/local &&
	cmake --build "$build/build" -j "$(($(nproc) + 1))"
} >"$log" 2>&1 || { tail -n 40 "$log" >&2; exit 1; }
echo "$build/build"
