#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host checks of the protocol core and the user space: what `make check-host`
# runs.
#
#   tests/host/check.sh <repo-root> <build-dir>
#
# 1. GoogleTest under ASan + UBSan (gcc, the kernel's compiler): core_tests
#    (kernel/core), lib_tests (libsmbdirect), and preload_tests and
#    tools_tests, examples_tests where they are built
# 2. every libFuzzer target for SMBDIRECT_FUZZ_SECONDS (default 60) each,
#    seeded from tests/fuzz/corpus/<target>, new inputs kept in the build dir
#    and tests/host/abi.sh: the UAPI's layout for x86-64 and i386, its
#    ioctl numbers and constants, libsmbdirect's exported symbols and types
#    against the committed baselines ("pass host/abi/..."), and
#    tests/host/i386.sh: the core, the library and the preload's logic
#    built with -m32, their unit tests ("pass host-i386/..."), and
#    tests/host/install.sh: the host-asan build installed under a DESTDIR,
#    a CMake consumer of it gets C++20, a C-only one links it with the C
#    compiler, C++17 gets the header's #error, the README's examples
#    compile ("pass host-install/..."), and
#    tests/host/dist.sh: `make dist`'s tarball holds what git tracks and
#    is the same bytes from another tree ("pass host/dist-..."), and
#    tests/host/sdcount.sh: the bench's instruction-counting TCG plugin
#    under qemu-x86_64 counts a known loop of N instructions within 1 %
#    ("pass host/sdcount/...", seconds once the QEMU header is cached)
# 3. clang source-based coverage of kernel/core from the GoogleTest run;
#    fails below 90 % of lines
#
# One line per result is appended to $SMBDIRECT_RESULTS (if set):
# "pass host/<Suite.Test>", "fail fuzz/<target>", "pass host/coverage", ...
set -u -o pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 <repo-root> <build-dir>" >&2
	exit 2
fi
repo=$(realpath "$1")
mkdir -p "$2"
build=$(realpath "$2")
results=${SMBDIRECT_RESULTS:-}
fuzz_seconds=${SMBDIRECT_FUZZ_SECONDS:-60}
jobs=$(($(nproc) + 1))
min_coverage=90
clangxx=${CLANGXX:-$(command -v clang++-14 || command -v clang++)}
clang=${CLANG:-$(command -v clang-14 || command -v clang)}
llvm_profdata=$(command -v llvm-profdata-14 || command -v llvm-profdata)
llvm_cov=$(command -v llvm-cov-14 || command -v llvm-cov)
status=0

record() { # record pass|fail name
	[ -n "$results" ] && echo "$1 $2" >>"$results"
	[ "$1" = pass ] || status=1
}

section() {
	echo
	echo "=== $* ==="
}

configure_build() { # dir, cmake args...
	local dir=$1
	shift
	cmake -S "$repo/userspace" -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DSD_WERROR=ON "$@" >"$dir.configure.log" 2>&1 &&
		cmake --build "$dir" -j "$jobs" >"$dir.build.log" 2>&1
	local rc=$?
	if [ $rc -ne 0 ]; then
		echo "build in $dir failed:"
		tail -n 60 "$dir.build.log" 2>/dev/null || tail -n 60 "$dir.configure.log"
	fi
	return $rc
}

# Runs the gtest binary, prints failures with their messages, records one
# line per test case. Returns non-zero if any failed or it crashed.
run_gtest() { # binary xml
	local bin=$1 xml=$2
	rm -f "$xml"
	"$bin" --gtest_output="xml:$xml" --gtest_brief=1
	local rc=$?
	if [ ! -s "$xml" ]; then
		echo "gtest produced no report (exit $rc): crashed or sanitizer abort"
		record fail "host/$(basename "$bin")"
		return 1
	fi
	python3 "$repo/tests/host/gtest-results.py" host "$xml" "$results" || rc=1
	[ $rc -eq 0 ] || status=1
	return $rc
}

# --- 1. GoogleTest + ASan/UBSan ------------------------------------------
section "host unit tests (gcc, ASan + UBSan)"
if configure_build "$build/host-asan" -DSD_SANITIZE=ON \
	-DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++; then
	# core_tests and lib_tests always exist; the preload's and the tool's
	# tests where their sources are.
	for t in core_tests lib_tests preload_tests tools_tests examples_tests; do
		bin=$(find "$build/host-asan/tests/host" -maxdepth 2 -type f -name "$t" | head -n 1)
		if [ -z "$bin" ]; then
			case $t in
			core_tests | lib_tests)
				echo "$t was not built"
				record fail "host/$t"
				;;
			esac
			continue
		fi
		echo "--- $t"
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
			run_gtest "$bin" "$build/host-asan/$t.xml"
	done
else
	record fail host/build
fi

# --- 1b. the binary contracts ------------------------------------------------
section "ABI: UAPI layout (x86-64, i386), exported symbols, abidiff"
"$repo/tests/host/abi.sh" "$repo" "$build" "$build/host-asan/lib/libsmbdirect.so.0" || status=1

# --- 1c. i386 ------------------------------------------------------------------
section "i386 (-m32): core, libsmbdirect and preload unit tests"
"$repo/tests/host/i386.sh" "$repo" "$build" || status=1

# --- 1d. the installed tree ------------------------------------------------------
section "install: a consumer of the installed headers and CMake package"
"$repo/tests/host/install.sh" "$repo" "$build" "$build/host-asan" || status=1

# --- 1e. the release tarball ------------------------------------------------------
section "dist: the release tarball's contents, the same bytes from another tree"
"$repo/tests/host/dist.sh" "$repo" "$build" || status=1

# --- 1f. the bench's instrument ---------------------------------------------------
section "sdcount: the TCG plugin counts a known loop of N instructions (qemu-x86_64)"
"$repo/tests/host/sdcount.sh" "$repo" "$build" || status=1

# --- 2. libFuzzer -----------------------------------------------------------
section "fuzzing (clang libFuzzer + ASan/UBSan, ${fuzz_seconds}s per target)"
fuzz_dir="$build/fuzz"
targets=$(sed -n 's/^sd_fuzz_target(\([a-z_0-9]*\).*/\1/p' "$repo/tests/fuzz/CMakeLists.txt")
if [ -z "$clangxx" ]; then
	echo "no clang++: cannot build fuzzers"
	for t in $targets; do record fail "fuzz/$t"; done
elif configure_build "$fuzz_dir" -DSD_FUZZ=ON -DSD_HOST_TESTS=OFF -DSD_USERSPACE=OFF \
	-DCMAKE_C_COMPILER="$clang" -DCMAKE_CXX_COMPILER="$clangxx"; then
	# The targets run side by side (each is one process on one core).
	declare -A fuzz_pid=()
	for t in $targets; do
		work="$fuzz_dir/corpus/$t"
		mkdir -p "$work" "$fuzz_dir/artifacts"
		log="$fuzz_dir/$t.log"
		# New finds go to the build dir's corpus; the repo's is read-only seed.
		"$fuzz_dir/tests/fuzz/$t" -max_total_time="$fuzz_seconds" -print_final_stats=1 \
			-timeout=10 -rss_limit_mb=2048 -artifact_prefix="$fuzz_dir/artifacts/$t-" \
			"$work" "$repo/tests/fuzz/corpus/$t" >"$log" 2>&1 &
		fuzz_pid[$t]=$!
	done
	for t in $targets; do
		work="$fuzz_dir/corpus/$t"
		log="$fuzz_dir/$t.log"
		wait "${fuzz_pid[$t]}"
		rc=$?
		execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
		rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n1)
		echo "fuzz/$t: ${execs:-?} execs total, ${rate:-?} execs/s, $(ls "$work" | wc -l) new corpus entries (exit $rc)"
		if [ $rc -eq 0 ]; then
			record pass "fuzz/$t"
		else
			echo "fuzz/$t FAILED; tail of $log:"
			tail -n 40 "$log"
			ls "$fuzz_dir/artifacts/" | grep "^$t-" | sed 's/^/  artifact: /'
			record fail "fuzz/$t"
		fi
	done
else
	for t in $targets; do record fail "fuzz/$t"; done
fi

# --- 3. coverage ------------------------------------------------------------
section "kernel/core line coverage (clang source-based, from the unit tests)"
cov_dir="$build/coverage"
# Not through ccache: coverage maps name their sources, which must stay
# the paths llvm-cov reads.
export CCACHE_DISABLE=1
if [ -n "$clangxx" ] && configure_build "$cov_dir" -DSD_COVERAGE=ON -DSD_USERSPACE=OFF \
	-DCMAKE_C_COMPILER="$clang" -DCMAKE_CXX_COMPILER="$clangxx"; then
	rm -f "$cov_dir"/*.profraw
	LLVM_PROFILE_FILE="$cov_dir/core-%p.profraw" \
		"$cov_dir/tests/host/core_tests" --gtest_brief=1 >"$cov_dir/run.log" 2>&1
	"$llvm_profdata" merge -sparse "$cov_dir"/*.profraw -o "$cov_dir/core.profdata"
	"$llvm_cov" report "$cov_dir/tests/host/core_tests" -instr-profile="$cov_dir/core.profdata" \
		"$repo"/kernel/core/*.cpp "$repo"/kernel/core/*.h | tee "$cov_dir/report.txt"
	pct=$("$llvm_cov" export -summary-only "$cov_dir/tests/host/core_tests" \
		-instr-profile="$cov_dir/core.profdata" "$repo"/kernel/core/*.cpp "$repo"/kernel/core/*.h |
		python3 -c 'import json,sys; print("%.1f" % json.load(sys.stdin)["data"][0]["totals"]["lines"]["percent"])')
	echo "kernel/core line coverage: ${pct}%"
	if python3 -c "import sys; sys.exit(0 if float('$pct') >= $min_coverage else 1)"; then
		record pass host/coverage
	else
		echo "coverage below ${min_coverage}%"
		record fail host/coverage
	fi
else
	record fail host/coverage
fi

exit $status
