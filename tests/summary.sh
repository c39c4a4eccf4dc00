#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# summary.sh RESULTS: every layer appends "pass <layer>/<name>" or
# "fail <layer>/<name>" lines; print the failures, per-layer counts and the
# one closing line "N passed, N failed". Exit 1 on any failure or no result.
set -euo pipefail
f=$1
[ -f "$f" ] || : > "$f"
echo "---- results by layer ----"
awk '{ split($2, a, "/"); n[a[1]]++; if ($1 == "pass") p[a[1]]++; else fl[a[1]]++ }
	END { for (l in n) printf "  %-10s %4d passed, %d failed\n", l, p[l] + 0, fl[l] + 0 }' "$f" | sort
if grep -q '^fail ' "$f"; then
	echo "---- failed ----"
	grep '^fail ' "$f" | sed 's/^fail /  /'
fi
pass=$(grep -c '^pass ' "$f" || true)
fail=$(grep -c '^fail ' "$f" || true)
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
