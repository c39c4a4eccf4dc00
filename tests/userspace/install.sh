#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The installed tree in the test VM (TAP). tests/userspace/build.sh ran
# `make install DESTDIR=<build>/../stage PREFIX=/usr/local` and
# tests/userspace/install/build-programs.sh, which built a C server and a
# C++ client with nothing but `pkg-config --cflags --libs smbdirect`, and the
# same two with CMake's find_package(smbdirect) (the client against the
# static archive), all against the stage. Here they run over rxe4 with
# LD_LIBRARY_PATH into the stage: they exchange a message and print the
# negotiated parameters.
#
# Environment: SD_US (user-space build dir).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/interop/common.bash"

us=${SD_US:?SD_US is not set}
stage=$(cd "$us/.." && pwd)/stage
progs=$(cd "$us/.." && pwd)/install-programs
prefix=$stage/usr/local
tmp=$(mktemp -d /tmp/install.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
addr=10.77.0.1
T="timeout -s KILL 60"

tap_plan 5

# 1. What `make install` put into the stage.
missing=()
for f in include/smbdirect/smbdirect.h include/smbdirect/smbdirect.hpp \
	include/smbdirect/linux/smbdirect.h include/smbdirect/linux/smbdirect_genl.h \
	lib/libsmbdirect.so.0 lib/libsmbdirect.a \
	lib/pkgconfig/smbdirect.pc lib/cmake/smbdirect/smbdirectConfig.cmake \
	lib/cmake/smbdirect/smbdirectConfigVersion.cmake \
	lib/cmake/smbdirect/smbdirectTargets.cmake \
	share/man/man3/libsmbdirect.3 share/man/man3/smbdirect_socket.3 \
	share/man/man3/smbdirect_interfaces.3 share/man/man3/libsmbdirect++.3 \
	bin/smbdirect lib/libsmbdirect-preload.so share/man/man8/smbdirect.8; do
	[ -e "$prefix/$f" ] || missing+=("$f")
done
libdir=$(dirname "$(find "$prefix" -name libsmbdirect.so.0 | head -n 1)")
if [ ${#missing[@]} -eq 0 ]; then
	tap_ok install.files
else
	tap_fail install.files "missing under $prefix: ${missing[*]}"
fi

# 2. The programs exist (the host half built them).
progs_missing=()
for p in sd_install_server sd_install_client cmake/sd_install_cmake_server \
	cmake/sd_install_cmake_client_static; do
	[ -x "$progs/$p" ] || progs_missing+=("$p")
done
if [ ${#progs_missing[@]} -eq 0 ]; then
	tap_ok install.programs_built
else
	tap_fail install.programs_built "not built in $progs: ${progs_missing[*]} (see build/userspace/install.log)"
fi

# 3. They link the staged library: the shared ones resolve libsmbdirect.so.0
# into the stage, the static one needs no libsmbdirect.so at all.
ldd_ok=1
for p in sd_install_server sd_install_client cmake/sd_install_cmake_server; do
	LD_LIBRARY_PATH=$libdir ldd "$progs/$p" 2>/dev/null | grep -q "libsmbdirect.so.0 => $libdir/" ||
		{ ldd_ok=0; echo "# $p does not resolve libsmbdirect.so.0 into $libdir"; }
done
ldd "$progs/cmake/sd_install_cmake_client_static" 2>/dev/null | grep -q libsmbdirect &&
	{ ldd_ok=0; echo "# the static client needs libsmbdirect.so"; }
[ $ldd_ok -eq 1 ] && tap_ok install.linkage || tap_fail install.linkage "see the comments above"

# pair NAME SERVER CLIENT PORT: the server listens on rxe4, the client
# connects; both must succeed and say what they exchanged.
pair() {
	local name=$1 server=$2 client=$3 port=$4
	if [ ! -x "$server" ] || [ ! -x "$client" ]; then
		tap_fail "$name" "not built"
		return
	fi
	LD_LIBRARY_PATH=$libdir $T "$server" "$addr" "$port" >"$tmp/$name.srv" 2>&1 &
	local spid=$!
	if ! wait_for_line "$tmp/$name.srv" 30 listening "$spid"; then
		tap_fail "$name" "the server did not listen" "$tmp/$name.srv"
		return
	fi
	LD_LIBRARY_PATH=$libdir $T "$client" "$addr" "$port" >"$tmp/$name.cli" 2>&1
	local crc=$?
	wait "$spid"
	local src=$?
	sed 's/^/# /' "$tmp/$name.srv" "$tmp/$name.cli"
	if [ $crc -eq 0 ] && [ $src -eq 0 ] &&
		grep -q '^server got "ping" over RoCE' "$tmp/$name.srv" &&
		grep -q '^client got "pong" over RoCE' "$tmp/$name.cli"; then
		tap_ok "$name"
	else
		tap_fail "$name" "server exit $src, client exit $crc"
	fi
}

# 4. pkg-config built, 5. CMake built (static client).
pair install.pkgconfig.rxe4 "$progs/sd_install_server" "$progs/sd_install_client" 7451
pair install.cmake.rxe4 "$progs/cmake/sd_install_cmake_server" \
	"$progs/cmake/sd_install_cmake_client_static" 7452
echo "# install.sh took ${SECONDS} s"
tap_exit
