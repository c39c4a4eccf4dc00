#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The 32-bit host layer: tests/host/i386/ built with -m32 (gcc, i386) and
# its GoogleTest suites run, without sanitizers (ASan's i386 runtime is
# not in Debian's lib32 packages).
#
#   tests/host/i386.sh <repo-root> <build-dir>
#
# core_tests, lib_tests (libsmbdirect without its netlink probe, so
# without the *.InterfacesListLoopback cases, which list the host's
# interfaces through it) and preload_tests, one "pass host-i386/<Suite.Test>" line per test case in
# $SMBDIRECT_RESULTS, "fail host-i386/build" if it does not build.
# tests/host/check.sh runs it: about 4 s with a warm ccache (make check's
# PATH), 1.5 min cold on two cores.
set -u -o pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 <repo-root> <build-dir>" >&2
	exit 2
fi
repo=$(realpath "$1")
mkdir -p "$2"
build=$(realpath "$2")/i386
results=${SMBDIRECT_RESULTS:-}
jobs=$(($(nproc) + 1))
status=0

record() { # record pass|fail name
	[ -n "$results" ] && echo "$1 $2" >>"$results"
	[ "$1" = pass ] || status=1
}

# The kernel's asm UAPI headers are one set for i386 and x86-64; without
# gcc-multilib (it conflicts with the arm64 cross compiler) they come from
# the native multiarch directory.
flags="-m32 -idirafter /usr/include/$(gcc -print-multiarch)"
mkdir -p "$build"
if ! { CFLAGS=$flags CXXFLAGS=$flags LDFLAGS=-m32 cmake -S "$repo/tests/host/i386" -B "$build" \
	-DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ \
	>"$build.configure.log" 2>&1 &&
	cmake --build "$build" -j "$jobs" >"$build.build.log" 2>&1; }; then
	echo "i386 build failed:"
	tail -n 60 "$build.build.log" 2>/dev/null || tail -n 60 "$build.configure.log"
	record fail host-i386/build
	exit 1
fi

. "$repo/tests/host/i386-exec.sh"
if ! i386_probe "$build"; then
	echo "i386 programs cannot run here: $i386_how"
	for t in core_tests lib_tests preload_tests; do record fail "host-i386/$t"; done
	exit 1
fi
# Under qemu-i386 the library cases that check what the kernel answers
# on a file that is no smbdirect socket (a pipe, a TCP socket) are left
# out: qemu-user answers socket options and ioctls it does not know
# itself (ENOPROTOOPT, EOPNOTSUPP, ENOSYS where the kernel says ENOTSOCK,
# ENOTTY), before any reaches the kernel. Everything else runs.
qemu_out=
if [ -n "$i386_runner" ]; then
	qemu_out=$(printf ':%s' Pipe.OptionsAndParameters Pipe.TypedOptionsNameTheirOption \
		Pipe.RegisterChecksBeforeTheIoctl Pipe.DeregisterKeepsWhatTheKernelDidNotTake \
		Pipe.ReadvWritevCheckInTheKernelsOrder SubmitOnPipe.SubmitChecksBeforeTheKernel \
		RdmaAsyncReap.CallChecks \
		RdmaAsyncReap.PlainSocketHasNothingWaiting \
		RdmaAsyncDeregister.FailureKeepsItAsTheSynchronousCall \
		Cpp\*.RdmaQueueOnAPlainSocket Cpp\*.RdmaQueueReportsErrors \
		Cpp\*.RegistrationCreateAndDeregisterAsync Cpp\*.RegistrationDeregistersOnce \
		Cpp\*.RegistrationNoticesAReusedFd Cpp\*.SocketCallsReportErrors \
		Cpp.AfterForkOnlyTheRegistrantsDestructorDeregisters)
	echo "qemu-i386: lib_tests without$(tr ':' ' ' <<<"$qemu_out")"
fi
for t in core_tests lib_tests preload_tests; do
	bin=$build/$t
	echo "--- $t (i386: $(file -b "$bin" | cut -d, -f1-2); run by $i386_how)"
	xml=$build/$t.xml
	rm -f "$xml"
	# Listing interfaces needs the netlink probe this build has not.
	filter=
	[ "$t" = lib_tests ] && filter=--gtest_filter=-*.InterfacesListLoopback$qemu_out
	i386_exec "$bin" --gtest_output="xml:$xml" --gtest_brief=1 $filter
	rc=$?
	if [ ! -s "$xml" ]; then
		echo "$t produced no report (exit $rc)"
		record fail "host-i386/$t"
		continue
	fi
	python3 "$repo/tests/host/gtest-results.py" host-i386 "$xml" "$results" || status=1
done
exit $status
