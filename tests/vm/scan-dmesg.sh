#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# scan-dmesg.sh DMESG [KMEMLEAK]
#
# Prints every KASAN, lockdep, BUG:, WARNING: and kmemleak report found, each
# attributed to this module (its frames or name appear in the report) or to
# someone else. Exit 1 when there is any report at all: a report fails the
# run whoever caused it, but the attribution says where to look.
set -euo pipefail
dmesg=$1 kmemleak=${2:-}
export LC_ALL=C
n=0
report() { # title text
	local who="NOT this module (look at the kernel or its drivers)"
	if grep -q 'af_smbdirect' <<<"$2"; then who="THIS MODULE (af_smbdirect)"; fi
	n=$((n + 1))
	echo "==== report $n: $1 -- attributed to: $who"
	head -n 60 <<<"$2"
}

# A report starts at a line that names its kind and runs until the next
# "=====" rule, "---[ end trace" or a blank timestamped gap of 40 lines.
strip() { sed -E 's/^\[[ 0-9.]+\] ?//'; }
starts='BUG: KASAN|BUG: |WARNING: |possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|INFO: possible|UBSAN:|Oops|general protection fault|kernel BUG at'
mapfile -t lines < <(strip < "$dmesg")
i=0
while [ $i -lt ${#lines[@]} ]; do
	l=${lines[$i]}
	if [[ $l =~ $starts ]] && ! [[ $l =~ ^KASAN\ init ]]; then
		text=$l
		j=$((i + 1))
		while [ $j -lt ${#lines[@]} ] && [ $((j - i)) -lt 80 ]; do
			m=${lines[$j]}
			text+=$'\n'$m
			j=$((j + 1))
			[[ $m =~ ^(==========|---\[\ end\ trace) ]] && break
		done
		report "$l" "$text"
		i=$j
		continue
	fi
	i=$((i + 1))
done

if [ -n "$kmemleak" ] && [ -s "$kmemleak" ]; then
	# One report per leaked object.
	awk '/^unreferenced object/ { if (buf != "") print buf "\0"; buf = $0; next }
	     { buf = buf "\n" $0 } END { if (buf != "") print buf "\0" }' "$kmemleak" |
	while IFS= read -r -d '' obj; do
		report "kmemleak: $(head -n1 <<<"$obj" | tr -d '\n')" "$obj"
	done > "$dmesg.kmemleak-reports"
	if [ -s "$dmesg.kmemleak-reports" ]; then
		cat "$dmesg.kmemleak-reports"
		n=$((n + $(grep -c '^==== report' "$dmesg.kmemleak-reports")))
	fi
fi
[ $n -eq 0 ]
