#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# parse-check.sh KSRC KTAP PASSED FAILED SKIPPED
#
# Feeds KTAP (the stream `make kunit` prints, tests/kunit/ktap.sh) to the
# kernel's own parser, KSRC/tools/testing/kunit/kunit.py parse, as a kernel
# CI lab does, and checks that its counts are the caller's: PASSED, FAILED
# and SKIPPED cases (check-vm.sh counts its per-case result lines), and
# nothing crashed (a case without a result) or failed to parse. Prints
# kunit.py's summary line; on a mismatch, first the reason in one line,
# then the summary and what kunit.py reported.
# Exit 0 when the counts agree, 1 otherwise. kunit.py's own exit status
# (1 when a case failed) is not the verdict: failing cases are counted.
set -uo pipefail
ksrc=$1 ktap=$2 want_pass=$3 want_fail=$4 want_skip=$5
kunit=$ksrc/tools/testing/kunit/kunit.py
[ -f "$kunit" ] || { echo "no $kunit"; exit 1; }
[ -s "$ktap" ] || { echo "no KTAP stream ($ktap)"; exit 1; }

# Read-only use of the source tree: no __pycache__ written into it.
out=$(PYTHONDONTWRITEBYTECODE=1 python3 "$kunit" parse <"$ktap" 2>&1 |
	sed 's/\x1b\[[0-9;]*m//g')
summary=$(grep -o 'Testing complete\..*' <<<"$out" | tail -n1)
if [ -z "$summary" ]; then
	echo "kunit.py parse printed no summary"
	tail -n 20 <<<"$out"
	exit 1
fi
count() { # what
	sed -n "s/.*[ :,]$1: \([0-9][0-9]*\).*/\1/p" <<<"$summary" | head -n1 | grep . || echo 0
}
got="passed $(count passed) failed $(count failed) skipped $(count skipped)"
want="passed $want_pass failed $want_fail skipped $want_skip"
bad=
[ "$got" = "$want" ] || bad="kunit.py counted $got, the result lines $want"
for k in crashed errors; do
	[ "$(count $k)" = 0 ] || bad+="${bad:+; }kunit.py: $k: $(count $k)"
done
total=$(sed -n 's/.*Ran \([0-9][0-9]*\) tests.*/\1/p' <<<"$summary")
[ "$total" = "$((want_pass + want_fail + want_skip))" ] ||
	bad+="${bad:+; }kunit.py ran $total tests, the result lines have $((want_pass + want_fail + want_skip))"
if [ -n "$bad" ]; then
	echo "$bad"
	echo "kunit.py parse: $summary"
	grep -E 'ERROR|CRASHED|FAILED' <<<"$out" | head -n 10
	exit 1
fi
echo "kunit.py parse: $summary"
exit 0
