#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The bench's instrument, tested on the host (seconds, no VM):
#
#   tests/host/sdcount.sh <repo-root> <build-dir>
#
# Builds the sdcount TCG plugin against the installed QEMU's plugin header
# (tests/bench/plugin/build.sh; the first run fetches Debian's qemu source
# of the installed version, later runs use the cache) and runs
# tests/bench/plugin/sdloop, a static x86-64 program with a loop of exactly
# 2*N + 3 instructions between a start and a stop mark, under qemu-x86_64
# (qemu-user: the same TCG and plugin API as the system emulator):
#   host/sdcount/count       N = 100000: within 1 % of 2N+3, all of it "user"
#   host/sdcount/scale       2N under another label: within 1 % of 4N+3, and
#                            the two counts' ratio within 1 % of (4N+3)/(2N+3)
#   host/sdcount/no-marks    the same loop without the magic values: no report
# One line per result goes to $SMBDIRECT_RESULTS (if set).
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 <repo-root> <build-dir>" >&2; exit 2; }
repo=$(realpath "$1")
mkdir -p "$2/sdcount"
dir=$(realpath "$2/sdcount")
results=${SMBDIRECT_RESULTS:-}
status=0
n=${SDCOUNT_TEST_N:-100000}

record() { # record pass|fail name [why]
	[ -n "$results" ] && echo "$1 $2" >>"$results"
	echo "$1 $2${3:+: $3}"
	[ "$1" = pass ] || status=1
}

fail_all() {
	for t in count scale no-marks; do record fail "host/sdcount/$t" "$1"; done
	exit 1
}

command -v qemu-x86_64 >/dev/null || fail_all "no qemu-x86_64 (qemu-user; make deps installs it)"
so=$("$repo/tests/bench/plugin/build.sh" "$dir") || fail_all "the plugin does not build"
${CC:-gcc} -O2 -static -Wall -Wextra -Werror -o "$dir/sdloop" \
	"$repo/tests/bench/plugin/sdloop.c" || fail_all "sdloop does not build"

# run ARGS...: the plugin's report lines for one sdloop run
run() {
	rm -f "$dir/report"
	qemu-x86_64 -plugin "$so,out=$dir/report" "$dir/sdloop" "$@" ||
		{ echo "sdloop $* exited $?" >&2; return 1; }
	cat "$dir/report" 2>/dev/null || true
}
field() { # field KEY LINE
	echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}
# within WANT GOT: |GOT - WANT| <= 1 % of WANT
within() {
	awk -v w="$1" -v g="$2" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && d * 100 <= w) }'
}

r1=$(run "$n" 1) || r1=
want1=$((2 * n + 3))
got1=$(field insns "$r1")
echo "N=$n: want $want1, report: ${r1:-none}"
if [ "$(echo "$r1" | grep -c .)" -eq 1 ] && [ "$(field label "$r1")" = 1 ] &&
	within "$want1" "$got1" && [ "$(field user "$r1")" = "$got1" ]; then
	record pass host/sdcount/count "$got1 counted, $want1 executed"
else
	record fail host/sdcount/count "want $want1 (all user) under label 1, report '${r1:-none}'"
fi

r2=$(run $((2 * n)) 2) || r2=
want2=$((4 * n + 3))
got2=$(field insns "$r2")
echo "N=$((2 * n)): want $want2, report: ${r2:-none}"
if [ "$(echo "$r2" | grep -c .)" -eq 1 ] && [ "$(field label "$r2")" = 2 ] &&
	within "$want2" "$got2" && [ -n "$got1" ] && [ "$got1" -gt 0 ] &&
	awk -v a="$got1" -v b="$got2" -v wa="$want1" -v wb="$want2" \
		'BEGIN { r = (b / a) / (wb / wa); exit !(r >= 0.99 && r <= 1.01) }'; then
	record pass host/sdcount/scale "$got2 counted, $want2 executed"
else
	record fail host/sdcount/scale "want $want2 under label 2 and twice label 1's count, report '${r2:-none}'"
fi

r3=$(run "$n" 1 nomarks) || r3=failed
if [ -z "$r3" ]; then
	record pass host/sdcount/no-marks
else
	record fail host/sdcount/no-marks "a run without marks reported '$r3'"
fi
exit "$status"
