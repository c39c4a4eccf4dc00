#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-programs.sh STAGE OUT: the install test's host half. STAGE is a
# `make install DESTDIR=STAGE PREFIX=/usr/local` tree. Builds, using only
# what was installed there:
#   OUT/sd_install_server  server.c    gcc, `pkg-config --cflags --libs smbdirect`
#   OUT/sd_install_client  client.cpp  g++, the same
#   OUT/cmake/...          cmake/      find_package(smbdirect) with
#                                      CMAKE_PREFIX_PATH=STAGE/usr/local:
#                          sd_install_cmake_server (shared library) and
#                          sd_install_cmake_client_static (static archive)
# and fails if pkg-config's answer names the source or build tree.
# tests/userspace/install.sh runs the programs in the VM.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
stage=$(realpath "$1")
mkdir -p "$2"
out=$(realpath "$2")
prefix=$stage/usr/local

pc=$(find "$prefix" -name smbdirect.pc -path '*/pkgconfig/*' | head -n 1)
[ -n "$pc" ] || { echo "build-programs: no smbdirect.pc under $prefix" >&2; exit 1; }
# The staged .pc says prefix=/usr/local; the sysroot maps it into STAGE.
# The system's directories stay on the path for libnl (Requires.private).
export PKG_CONFIG_SYSROOT_DIR=$stage
export PKG_CONFIG_PATH=$(dirname "$pc")
flags=$(pkg-config --cflags --libs smbdirect)
echo "pkg-config --cflags --libs smbdirect: $flags"
repo=$(cd "$here/../../.." && pwd)
for word in $flags; do
	case $word in
	-I"$repo"* | -L"$repo"*)
		case $word in -I"$stage"* | -L"$stage"*) ;; *)
			echo "build-programs: $word points into the source tree" >&2
			exit 1
			;;
		esac
		;;
	esac
done
[[ $flags == *-lsmbdirect* ]] || { echo "build-programs: no -lsmbdirect in $flags" >&2; exit 1; }

# shellcheck disable=SC2086 # the flags are words
gcc -std=c11 -Wall -Wextra -Werror "$here/server.c" $flags -o "$out/sd_install_server"
# shellcheck disable=SC2086
g++ -std=c++20 -Wall -Wextra -Werror "$here/client.cpp" $flags -o "$out/sd_install_client"

cmake -S "$here/cmake" -B "$out/cmake" -DCMAKE_PREFIX_PATH="$prefix" \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON
cmake --build "$out/cmake" -j 2
# The consumer found the staged package, not another one.
grep -q "smbdirect_DIR:PATH=$prefix/" "$out/cmake/CMakeCache.txt" ||
	{ echo "build-programs: find_package(smbdirect) did not use $prefix" >&2; exit 1; }
echo "build-programs: built into $out"
